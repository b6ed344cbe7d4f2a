"""The core every layer stands on: the Result envelope, bad-input errors, the kind and method protocols,
task views, exact outcomes and the solver backends.
"""
