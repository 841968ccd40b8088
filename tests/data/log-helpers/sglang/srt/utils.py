import functools
import logging

logger = logging.getLogger(__name__)


def log_info_on_rank0(logger, msg):
    try:
        if torch.distributed.is_initialized() and get_parallel().tp_rank == 0:
            logger.info(msg)
    except Exception as e:
        if torch.distributed.get_rank() == 0:
            logger.info(f"{msg} (rank-check failed: {e})")


def log_debug_on_rank0(logger, msg):
    if get_parallel().tp_rank == 0:
        logger.debug(msg)


@functools.lru_cache(None)
def print_warning_once(msg: str) -> None:
    # Set the stacklevel to 2 to print the caller's line info
    logger.warning(msg)


@functools.lru_cache(None)
def print_info_once(msg: str) -> None:
    logger.info(msg)


def rank0_log(msg: str):
    if not model_parallel_is_initialized() or get_parallel().tp_rank == 0:
        logger.info(msg)


def print_deprecated_warning(message: str):
    logger.warning(f"\033[1;33m{message}\033[0m")


def fetch(key, default=None):
    # logs its argument inside a sentence: not a logging helper
    logger.warning(f"Failed to fetch {key} from HiCacheFile storage.")
    return default


def _print_info_once(logger, msg, *args):
    logger.info(msg, *args)


class SGLDiffusionLogger:
    def info_once(self, msg, *args):
        _print_info_once(self, msg, *args)

    def log_info(self, msg):
        logger.info(f"[{self.__class__.__name__}] {msg}")
