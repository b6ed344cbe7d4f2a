"""Operator replication and placement, ODRP (Cardellini et al. 2017): kind ``odrp``."""
