// graft/graph_all.hpp — TensorFlow graphs in graft: the IR (graph, node, endpoint, attrs, op
// registry, MetaGraph parts, variables, function inlining) and reading/writing TF's files.
// The IR headers (graft/graph/*.hpp) need no protobuf; the file layer (graft/formats/tf_graph/graph_io.hpp,
// graft/formats/tf_graph/saved_model.hpp) needs linking graft::compiled.
//
// A worked example: load a TF2 SavedModel, list its variables, and make its serving signature a
// plain graph.
//
//   #include <graft/graph_all.hpp>
//   int main() {
//       auto mg = graft::tf::load_meta_graph("export_dir");            // tags {"serve"}
//       graft::tf::checkpoint_reader ckpt("export_dir");               // variables/variables
//       for (auto& v : graft::tf::find_variables(mg, ckpt))
//           std::cout << v.name << " -> " << v.checkpoint_key << "\n";  // "w -> w/.ATTRIBUTES/VARIABLE_VALUE"
//       auto sig = graft::signature_graph(mg, "serving_default");      // calls inlined, pruned
//       for (graft::node* n : sig.graph.topological_order()) std::cout << n->name << " " << n->op << "\n";
//       graft::tf::write_graph(sig.graph, "serving.pbtxt");            // text, loadable by TensorFlow
//   }                                                                  // graft::error on bad input
#pragma once

#include "graft/graph/attr.hpp"
#include "graft/graph/endpoint.hpp"
#include "graft/graph/function.hpp"
#include "graft/graph/graph.hpp"
#include "graft/graph/inline.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/graph/node.hpp"
#include "graft/graph/op_registry.hpp"
#include "graft/graph/variables.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/formats/tf_graph/saved_model.hpp"
