"""The course's side of nbgrader's exchange: a collect that takes only what a student truly handed in.

``c.ExchangeFactory.collect = "dpgrader.exchange.CourseCollect"`` (in the course's
``nbgrader_config.py``) makes ``nbgrader collect`` and formgrader's collect run it;
``python -m dpgrader.classroom collect`` runs it too (:func:`collect_assignment`).
"""

from dpgrader.exchange.collect import CollectReport, CourseCollect, Refusal, collect_assignment, recorded_time
from dpgrader.exchange.inbound import Refused, copy_snapshot, parse_inbound_name, require_not_future, snapshot
from dpgrader.exchange.owners import OwnersUnavailable, owner_name, read_owners_file

__all__ = [
    "CollectReport", "CourseCollect", "OwnersUnavailable", "Refusal", "Refused", "collect_assignment",
    "copy_snapshot", "owner_name", "parse_inbound_name", "read_owners_file", "recorded_time",
    "require_not_future", "snapshot",
]
