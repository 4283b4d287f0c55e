"""mbserve: the command line (mbserve.cli) over the numeric core, the service and the worker."""
