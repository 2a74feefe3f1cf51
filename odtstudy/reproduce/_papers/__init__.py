"""Claims modules, one per reproduction (``RULES`` and ``evaluate``)."""
