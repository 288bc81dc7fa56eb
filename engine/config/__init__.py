"""Settings surfaces with no behaviour of their own: worker settings, ``.properties`` files,
config providers (``${provider:path:key}``) and the masking of secret values in logs and answers."""
