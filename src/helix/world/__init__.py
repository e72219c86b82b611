"""The run's world: snapshots over a content-addressed store, browsing, diffs, restores."""

from ._browse import DIFF_MAX_BYTES as DIFF_MAX_BYTES
from ._browse import FileInfo as FileInfo
from ._browse import WorldBrowser as WorldBrowser
from ._browse import clean_path as clean_path
from ._browse import file_diff as file_diff
from ._history import FOLDED_TYPES as FOLDED_TYPES
from ._history import Point as Point
from ._history import WorldFold as WorldFold
from ._history import fold_world as fold_world
from ._history import folded_world as folded_world
from ._history import keep_world as keep_world
from ._history import parse_point as parse_point
from ._history import world_and_seq_at as world_and_seq_at
from ._history import world_at as world_at
from ._history import world_fold_version as world_fold_version
from ._ignore import IgnoreRules as IgnoreRules
from ._manifest import Delta as Delta
from ._manifest import Entry as Entry
from ._manifest import Manifest as Manifest
from ._manifest import apply_delta as apply_delta
from ._manifest import content_delta as content_delta
from ._manifest import delta as delta
from ._manifest import load_manifest as load_manifest
from ._manifest import save_manifest as save_manifest
from ._objects import ObjectStore as ObjectStore
from ._recorder import WorldRecorder as WorldRecorder
from ._restore import Restored as Restored
from ._restore import materialize as materialize
from ._restore import restore as restore
from ._roots import world_root as world_root
from ._scan import DEFAULT_MAX_FILE_BYTES as DEFAULT_MAX_FILE_BYTES
from ._scan import Scanner as Scanner
from ._scan import ScanResult as ScanResult

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DIFF_MAX_BYTES",
    "FOLDED_TYPES",
    "Delta",
    "Entry",
    "FileInfo",
    "IgnoreRules",
    "Manifest",
    "ObjectStore",
    "Point",
    "Restored",
    "ScanResult",
    "Scanner",
    "WorldBrowser",
    "WorldFold",
    "WorldRecorder",
    "apply_delta",
    "clean_path",
    "content_delta",
    "delta",
    "file_diff",
    "fold_world",
    "folded_world",
    "keep_world",
    "load_manifest",
    "materialize",
    "parse_point",
    "restore",
    "save_manifest",
    "world_and_seq_at",
    "world_at",
    "world_fold_version",
    "world_root",
]
