"""The TFRecord checksum, eight bytes a step, against TensorBoard's own byte-at-a-time version."""

from hypothesis import given
from hypothesis import strategies as st
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import (  # type: ignore[import-untyped]  # no hints
    masked_crc32c as tensorboard_masked_crc32c,
)

from core.diagnose.crc32c import crc32c, masked_crc32c


def test_the_standard_check_value():
    # Every CRC-32C implementation gives 0xE3069283 for the nine digits "123456789" (RFC 3720, B.4).
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0


@given(st.binary(max_size=100))
def test_the_masked_checksum_equals_tensorboards(data):
    assert masked_crc32c(data) == tensorboard_masked_crc32c(data)
