"""askrepo: ask questions about a code base, get answers with exact path:line citations."""

import os as _os

# onnxruntime phones home ~9 s after start unless this is set before it is imported.
_os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
# LanceDB's Rust core logs deprecation notes to stderr at WARN; keep the CLI's output clean.
_os.environ.setdefault("LANCEDB_LOG", "error")

__version__ = "0.1.0"
