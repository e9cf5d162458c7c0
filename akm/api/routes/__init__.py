"""Route modules; each holds one ``router``."""
