// graft::compiled — compiled part of the TF format layer (protobuf-generated code is added by CMake).
#include "graft/core/config.hpp"

namespace graft::tf {
/// The TensorFlow checkpoint bundle version graft writes (kTensorBundleVersion).
extern const int tensor_bundle_version = 1;
}  // namespace graft::tf
