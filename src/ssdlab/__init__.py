"""ssdlab: an open SSD characterization lab built on fio."""

__version__ = "0.1.0"
