"""Datasets: files read a record at a time, rows checked against their limits, ids kept
unique, and the ids a person most likely meant.
"""
