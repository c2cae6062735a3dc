"""A run's cases as narrow columns, held in memory or spilled to temporary files: what a
conclusion reads, and nothing else.
"""
