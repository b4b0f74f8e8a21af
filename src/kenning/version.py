"""kenning's version (one place, importable without the package's other modules)."""

__version__ = "0.1.0"
