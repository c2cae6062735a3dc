"""Running a system over cases: the system and its components, the processes and sandbox it
runs in (`isolation/`), and the gateway that meters its model calls (`gateway/`).
"""
