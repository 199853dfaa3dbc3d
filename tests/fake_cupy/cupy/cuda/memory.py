class OutOfMemoryError(Exception):
    pass
