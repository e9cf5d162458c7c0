"""Service functions behind the REST API: audits over the store, answers and re-verification.

Routes parse a request, call one function here and map its typed errors to problems; nothing
here knows about HTTP.
"""
