"""Blueprints read together: the teams that share one site checked as one (`shared_site`), the blueprints that
include a site file (`site_users`, what `check site.yaml` judges) and the ones a change touches through the include
graph (`affected`)."""
