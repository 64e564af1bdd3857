from clusterforge.cli.main import main

main()
