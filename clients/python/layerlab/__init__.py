"""layerlab's Python client: studies, trials and learning curves as pandas DataFrames,
from a `layerlab serve` (Client) or straight from a SQLite store file (Store, read-only).

    import layerlab
    lab = layerlab.connect("http://127.0.0.1:8080")     # or layerlab.connect("layerlab.db")
    df = lab.trials("depth-sweep")

HTTP uses the standard library only; pandas is needed for DataFrames (trials, curves).
"""

from .client import Client
from .errors import LayerlabError
from .store import Store

__all__ = ["Client", "Store", "LayerlabError", "connect"]
__version__ = "0.1.0"


def connect(target=None, token=None, timeout=30.0):
    """A Client for an http(s) URL (default LAYERLAB_URL or http://127.0.0.1:8080), or a
    read-only Store for a SQLite file ("layerlab.db" or "sqlite:layerlab.db")."""
    if target is not None and not str(target).startswith(("http://", "https://")):
        return Store(target, timeout=timeout)
    return Client(target, token=token, timeout=timeout)
