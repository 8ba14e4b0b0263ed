"""The list of checks the engine runs.  What each rule id is (severity, fix safety, docs)
lives in its module of :mod:`luaguard.rules`."""

from __future__ import annotations

from ..findings import Severity
from ..rules.registry import check_rule_ids


def all_checks() -> list:
    """A fresh instance of every check, in reporting order."""
    from .placeholders import PlaceholderCheck
    from .structure import LexicalCheck, StructureCheck
    from .syntax import SyntaxCheck

    from .deprecated_api import DeprecatedApiCheck
    from .instance_paths import InstancePathCheck
    from .restricted_api import RestrictedApiCheck
    from .undefined_variable import UndefinedVariableCheck
    from .unknown_class import UnknownClassCheck
    from .unknown_member import UnknownMemberCheck

    return [
        LexicalCheck(), StructureCheck(), SyntaxCheck(), PlaceholderCheck(), InstancePathCheck(),
        UndefinedVariableCheck(), UnknownClassCheck(), UnknownMemberCheck(), DeprecatedApiCheck(),
        RestrictedApiCheck(),
    ]


def rule_ids() -> dict[str, Severity]:
    """Every rule id the checks report, with its default severity (:mod:`luaguard.rules`)."""
    return check_rule_ids()
