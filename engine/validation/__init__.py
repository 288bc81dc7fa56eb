"""Admitting connector configs before anything is written: the framework's own keys, the
connector's ``validate()``, and the ``ConfigInfos`` answer of ``PUT .../config/validate``."""
