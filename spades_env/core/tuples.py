"""`fixed_tuple(array, n)`: the first `n` values of a 1-D array as a tuple, inside a kernel.

A kernel that keeps the rules vector (core/rules_vector.py) as an array must read each value
from memory again after every store into the state (the compiler cannot tell that the
store leaves it alone); as a tuple the values live in registers. Numba's own
`to_fixed_tuple` copies the growing tuple once per element (microseconds for 62
values); this one loads each element once.
"""

from __future__ import annotations

from numba import types
from numba.core.errors import RequireLiteralValue
from numba.extending import intrinsic


@intrinsic
def fixed_tuple(typingctx, array, length):
    if not isinstance(array, types.Array) or array.ndim != 1:
        return None
    if not isinstance(length, types.IntegerLiteral):
        raise RequireLiteralValue("the tuple's length must be a constant")
    n = int(length.literal_value)
    tuple_type = types.UniTuple(array.dtype, n)

    def codegen(context, builder, signature, args):
        ary = context.make_array(array)(context, builder, value=args[0])
        out = context.get_constant_undef(tuple_type)
        for i in range(n):
            ptr = builder.gep(ary.data, [context.get_constant(types.intp, i)])
            out = builder.insert_value(out, builder.load(ptr), i)
        return out

    return tuple_type(array, length), codegen
