"""The audit viewer's templates (``templates/``) and static files (``static/``), package data.

They are read through ``importlib.resources`` by :mod:`akm.api.routes.ui`; nothing of the
viewer is fetched from anywhere else.
"""
