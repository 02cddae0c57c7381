"""nbgrader settings of a student's server on the hub: the course and the shared exchange."""

import os

c = get_config()  # noqa: F821 (provided by nbgrader)

c.CourseDirectory.course_id = "dp-course"
# The spawner sets DP_EXCHANGE_ROOT (deploy/jupyterhub/jupyterhub_config.py); nbgrader's default otherwise.
c.Exchange.root = os.environ.get("DP_EXCHANGE_ROOT", "/srv/nbgrader/exchange")
