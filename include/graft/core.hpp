// graft/core.hpp — the tensor engine's core: dtype, shape, tensor, .npy, errors, threads.
#pragma once
#include "graft/core/config.hpp"
#include "graft/core/error.hpp"
#include "graft/core/dtype.hpp"
#include "graft/core/shape.hpp"
#include "graft/core/buffer.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/core/io.hpp"
#include "graft/formats/npy.hpp"
#include "graft/core/threads.hpp"
