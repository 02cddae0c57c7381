"""nbgrader settings of an instructor's server on the hub: the course folder in their home, and the exchange.

The course's own nbgrader_config.py (preprocessors, timeouts, feedback settings) is loaded
from that folder, so formgrader's buttons grade exactly as the command line does.
"""

import os

c = get_config()  # noqa: F821 (provided by nbgrader)

course_root = os.environ.get("DP_COURSE_ROOT") or os.path.expanduser("~/dp-course")
load_subconfig(os.path.join(course_root, "nbgrader_config.py"))  # noqa: F821 (provided by traitlets)
c.CourseDirectory.root = course_root
c.CourseDirectory.course_id = "dp-course"
c.Exchange.root = os.environ.get("DP_EXCHANGE_ROOT", "/srv/nbgrader/exchange")
# The course's collect, even with an older copy of the course's file (it sets the same): see dpgrader/exchange/.
c.ExchangeFactory.collect = "dpgrader.exchange.CourseCollect"
# On Kubernetes the hub writes who owns which uid here (deploy/kubernetes/values.yaml); unset on one machine.
if os.environ.get("DP_EXCHANGE_OWNERS"):
    c.CourseCollect.owners_file = os.environ["DP_EXCHANGE_OWNERS"]
