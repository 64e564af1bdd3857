"""Files in and out, on the foundations: YAML read with the line of every key, bounded (`yamlsource`,
`yamlguard`, `fastyaml`), files and folders written atomically (`atomic`), where the checkout keeps its roles and
caches (`checkout`) and file names as reports show them (`paths`)."""
