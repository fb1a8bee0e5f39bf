// graft/exec/function_runner.hpp — runs one function of a graph's library as a graph of its own:
// what TF2's functional ops (While, If, Case) do with their bodies and branches.
//
// The body graph is built once: one _GraftCallArg node per argument, a call of the function that
// graph/inline.hpp inlines (calls nested inside it too: PartitionedCall, a function used as an op),
// and one _GraftCallRet node per result; a session over it (sharing the caller's variables) runs it
// for each call(). Identity nodes that forward resource handles are bypassed (their readers take
// the handle itself), since the Identity kernels read tensors. Arguments and results are values, so resource handles (captured variables) and
// TensorLists pass through as they are. Nested While / If nodes stay functional ops: their own
// kernels run them (the body graph carries the library).
//
//   function_runner body(*c.state().library, c.attr("body").func(), "While 'w'", c.state());
//   std::vector<value> next = body.call(loop_vars);
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/graph/inline.hpp"

namespace graft::exec {

/// The arguments a running body reads and the results it hands back (_GraftCallArg / _GraftCallRet).
struct call_frame {
    std::vector<value> args;
    std::vector<value> rets;
};

namespace function_detail {
inline constexpr const char* frame_key = "__graft_call_frame";

/// Identity / IdentityN nodes that carry a resource handle (a body passing a captured variable
/// through, or a nested call inlining left) read as the tensors they forward: their readers take
/// the forwarded endpoints, and the node becomes a NoOp ordered after its inputs (the Identity
/// kernels read tensors, not handles). Never throws for a well-formed graph.
inline void bypass_resource_identities(graph& g) {
    std::unordered_map<std::string, std::vector<endpoint>> through;
    for (const auto& n : g) {
        if (n.op != "Identity" && n.op != "IdentityN") continue;
        const attr_value* t = n.attr("T");
        bool resource = false;
        if (t && t->which() == attr_value::kind::type) resource = t->type() == dtype::resource;
        else if (t && t->is_list()) {
            for (auto d : t->list_of<dtype>()) resource = resource || d == dtype::resource;
        }
        if (resource) through[n.name] = n.inputs;
    }
    if (through.empty()) return;
    auto resolve = [&](endpoint e) {
        for (int hop = 0; hop < 64; ++hop) {
            auto it = through.find(e.node);
            if (it == through.end() || e.index < 0 || static_cast<std::size_t>(e.index) >= it->second.size()) break;
            e = it->second[static_cast<std::size_t>(e.index)];
        }
        return e;
    };
    for (auto& n : g) {
        if (through.count(n.name)) continue;
        for (auto& e : n.inputs) e = resolve(e);
    }
    for (auto& [name, ins] : through) {
        node& n = g.at(name);
        n.op = "NoOp";
        n.attrs = {};
        for (auto& e : ins) n.add_control_input(resolve(e).node);
        n.inputs.clear();
    }
    g.touch();
}
}  // namespace function_detail

/// One library function instantiated with its attrs, ready to run. call() is serialized (one
/// frame per runner).
class function_runner {
public:
    /// Builds the body graph of `f` from `lib`; `who` names the calling node in errors. Throws
    /// not_found_error for a function the library lacks and graph_error from inlining.
    function_runner(const function_library& lib, const func_attr& f, std::string who, session_state& caller)
        : name_(f.name), who_(std::move(who)), frame_(std::make_shared<call_frame>()) {
        const function_def& fd = lib.at(f.name);
        for (auto& a : fd.signature.inputs) append_arg_dtypes(fd.signature, a, f.attrs, who_, in_types_);
        for (auto& a : fd.signature.outputs) append_arg_dtypes(fd.signature, a, f.attrs, who_, out_types_);
        graph g;
        g.versions.producer = 1000;
        g.library = lib;
        g.register_library_ops();
        node call("call", f.name);
        call.attrs = f.attrs;
        for (std::size_t i = 0; i < in_types_.size(); ++i) {
            node a("arg_" + std::to_string(i), "_GraftCallArg");
            a.attrs.set("T", in_types_[i]);
            a.attrs.set("index", static_cast<std::int64_t>(i));
            call.inputs.push_back({a.name, 0});
            g.add_node(std::move(a));
        }
        g.add_node(std::move(call));
        inline_functions(g);
        std::vector<endpoint> outs = g.at("call").inputs;
        targets_ = g.at("call").control_inputs;
        g.remove_node("call");
        if (outs.size() != out_types_.size()) {
            throw graph_error(detail::cat(who_, ": function '", name_, "' binds ", outs.size(), " results for ",
                                          out_types_.size(), " outputs"));
        }
        for (std::size_t j = 0; j < outs.size(); ++j) {
            node r("ret_" + std::to_string(j), "_GraftCallRet");
            r.inputs.push_back(outs[j]);
            r.attrs.set("T", out_types_[j]);
            r.attrs.set("index", static_cast<std::int64_t>(j));
            targets_.push_back(r.name);
            g.add_node(std::move(r));
        }
        function_detail::bypass_resource_identities(g);
        session_ = std::make_unique<session>(std::move(g), caller.options, caller.variables_ptr());
        auto frame = frame_;
        (void)session_->state().node_state<std::shared_ptr<call_frame>>(function_detail::frame_key,
                                                                          [&] { return frame; });
    }

    [[nodiscard]] const std::string& name() const { return name_; }
    [[nodiscard]] const std::vector<dtype>& input_types() const { return in_types_; }
    [[nodiscard]] const std::vector<dtype>& output_types() const { return out_types_; }

    /// Runs the function on `args` (one per input) and returns its results. Throws
    /// invalid_argument_error for a wrong argument count or dtype, and what the body throws.
    std::vector<value> call(std::vector<value> args) {
        if (args.size() != in_types_.size()) {
            throw invalid_argument_error(detail::cat(who_, ": function '", name_, "' takes ", in_types_.size(),
                                                     " arguments, given ", args.size()));
        }
        for (std::size_t i = 0; i < args.size(); ++i) {
            dtype t = type_of(args[i]);
            if (t != in_types_[i] && t != dtype::invalid) {
                throw invalid_argument_error(detail::cat(who_, ": argument ", i, " of function '", name_, "' must be ",
                                                         dtype_name(in_types_[i]), " but is ", dtype_name(t)));
            }
        }
        // A body that runs a functional op calling itself again nests one call per level on this
        // thread's stack: past max_call_depth that is an error, not a stack overflow.
        static thread_local int depth = 0;
        if (depth >= max_call_depth) {
            throw graph_error(detail::cat(who_, ": function calls nest deeper than ", max_call_depth,
                                          " levels at run time (function '", name_, "')"),
                              {}, "a recursive function (a While/If body that calls itself) cannot run in graft");
        }
        struct nest {
            int& d;
            explicit nest(int& x) : d(x) { ++d; }
            ~nest() { --d; }
        } level{depth};
        std::lock_guard lock(mu_);
        frame_->args = std::move(args);
        frame_->rets.assign(out_types_.size(), value{});
        struct clear_frame {
            call_frame& f;
            ~clear_frame() { f.args.clear(); }
        } guard{*frame_};
        if (!targets_.empty()) session_->run({}, {}, targets_);
        for (std::size_t j = 0; j < frame_->rets.size(); ++j) {
            if (!frame_->rets[j].present()) {
                throw graph_error(detail::cat(who_, ": function '", name_, "' produced no value for result ", j));
            }
        }
        return std::move(frame_->rets);
    }

    /// Functional calls (While/If/Case bodies, PartitionedCall) nested deeper than this on one
    /// thread are a graph_error.
    static constexpr int max_call_depth = 64;

    /// The dtype a value carries (resource for handles, invalid for dead values).
    static dtype type_of(const value& v) {
        if (v.is_resource) return dtype::resource;
        if (v.is_ref && v.var) return v.var->type;
        return v.t.valid() ? v.t.type() : dtype::invalid;
    }

private:
    std::string name_, who_;
    std::vector<dtype> in_types_, out_types_;
    std::vector<std::string> targets_;
    std::shared_ptr<call_frame> frame_;
    std::unique_ptr<session> session_;
    std::mutex mu_;
};

/// The frame of the body this kernel runs in. Throws graph_error naming the node outside one.
inline call_frame& frame_of(kernel_context& c) {
    auto& f = c.state().node_state<std::shared_ptr<call_frame>>(function_detail::frame_key,
                                                                  [] { return std::shared_ptr<call_frame>(); });
    if (!f) c.fail(c.n().op + " runs only inside a function body run by a functional op (While, If, Case)");
    return *f;
}

}  // namespace graft::exec
