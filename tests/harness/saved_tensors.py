"""What autograd really keeps for backward, measured on the CPU with saved-tensor hooks.

Every tensor an autograd node saves passes through the pack hook of
`torch.autograd.graph.saved_tensors_hooks`. We note its storage (a view keeps its whole storage
alive, so storages are counted, each once) and the block running when it was first saved; parameters
are left out (they are the weights, counted apart), while copies of them (autocast's BF16 casts) are
kept. The result is what a count of saved activations must match for the same model and batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

OUTSIDE = -1  # saved outside every block: embeddings, final norm, output layer, loss


@dataclass
class SavedBytes:
    """Bytes of the storages autograd saved, by the block that first saved them (OUTSIDE for the rest)."""

    by_block: dict[int, int] = field(default_factory=dict)
    dtypes: dict[int, dict[str, int]] = field(default_factory=dict)

    @property
    def total_bytes(self) -> int:
        """Every saved storage, counted once."""
        return sum(self.by_block.values())

    def block_bytes(self, block: int) -> int:
        """What block `block` (0 = nearest the input) saved first."""
        return self.by_block.get(block, 0)


@contextmanager
def _running_block(blocks: Sequence[torch.nn.Module], current: list[int]) -> Iterator[None]:
    handles = []
    for index, block in enumerate(blocks):

        def enter(_module: torch.nn.Module, _args: object, index: int = index) -> None:
            current.append(index)

        def leave(_module: torch.nn.Module, _args: object, _out: object) -> None:
            current.pop()

        handles.append(block.register_forward_pre_hook(enter))
        handles.append(block.register_forward_hook(leave))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def saved_bytes(
    model: torch.nn.Module, blocks: Sequence[torch.nn.Module], run: Callable[[], torch.Tensor]
) -> SavedBytes:
    """What `run()` (a forward returning the loss) makes autograd keep, block by block.

    `blocks` are the model's transformer blocks in order; the loss is kept until this returns, so
    nothing is freed before it is counted.
    """
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: set[int] = set()
    current: list[int] = []
    result = SavedBytes()

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        pointer = storage.data_ptr()
        if pointer not in parameters and pointer not in seen and storage.nbytes():
            seen.add(pointer)
            block = current[-1] if current else OUTSIDE
            result.by_block[block] = result.by_block.get(block, 0) + storage.nbytes()
            kinds = result.dtypes.setdefault(block, {})
            kinds[str(tensor.dtype)] = kinds.get(str(tensor.dtype), 0) + storage.nbytes()
        # A detached alias holds the same storage as long as autograd would. Returning `tensor` itself
        # makes a node that saves its own output hold its grad_fn: a cycle Python's collector cannot see,
        # which kept every measured graph, and the model's parameters with it, alive.
        return tensor.detach()

    with _running_block(blocks, current), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = run()
    del loss
    return result


def one_thread() -> Iterator[None]:
    """Run a test module's small tensors on one thread (the host is shared), then restore the count.
    Wrap it as a module fixture: `_one_thread = pytest.fixture(scope="module", autouse=True)(one_thread)`."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
