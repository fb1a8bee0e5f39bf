// graft/formats/tf/checkpoint_all.hpp — the whole TF checkpoint layer in one include.
//
//   #include "graft/formats/tf/checkpoint_all.hpp"
//   graft::tf::checkpoint_reader r("/models/half_plus_two/00000123");   // SavedModel, V2 or V1
//   for (const auto& k : r.keys()) std::cout << k << " " << r.shape_of(k).str() << "\n";
//   graft::tensor a = r.read("a");
//
//   graft::tf::bundle_writer w("/tmp/out/model.ckpt-1");   // byte-identical to TF's BundleWriter
//   w.add("a", a);
//   w.finish();
//   graft::tf::write_checkpoint_state("/tmp/out", {"model.ckpt-1", {"model.ckpt-1"}, {}, 0});
//
// Reading snappy-compressed indexes needs graft::compiled linked (see graft/formats/tf/snappy.hpp).
#pragma once

#include "graft/formats/tf/crc32c.hpp"
#include "graft/formats/tf/wire.hpp"
#include "graft/formats/tf/snappy.hpp"
#include "graft/formats/tf/sstable.hpp"
#include "graft/formats/tf/tensor_slice.hpp"
#include "graft/formats/tf/ckpt_proto.hpp"
#include "graft/formats/tf/tensor_proto.hpp"
#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/bundle_merge.hpp"
#include "graft/formats/tf/checkpoint_v1.hpp"
#include "graft/formats/tf/checkpoint_state.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/name_map.hpp"
