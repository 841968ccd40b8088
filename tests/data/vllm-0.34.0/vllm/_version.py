__version__ = version = '0.34.0'
