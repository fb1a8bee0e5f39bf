// graft/exec/variable_store.hpp — where a session keeps its variables' values.
//
// A variable is a named slot holding a tensor (its current value) plus an "initialized" flag. TF1 ref
// variables (VariableV2) and TF2 resource variables (VarHandleOp) both live here, keyed by
// container + shared_name (TF's resource manager key) — by default the node name. Two sessions never
// share a store unless the user passes the same one (that is how `share` clones tie storage).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/graph/node.hpp"

namespace graft::exec {

/// One variable's storage. Writers replace or update `value` under `mu`.
struct variable {
    std::string name;            ///< the key in the store (container/shared_name or node name)
    dtype type = dtype::invalid; ///< declared dtype (base type)
    graft::shape declared_shape = graft::shape::unknown_rank();
    tensor value;                ///< current value; invalid until initialized
    mutable std::shared_mutex mu;

    [[nodiscard]] bool initialized() const {
        std::shared_lock lock(mu);
        return value.valid();
    }
    /// The current value; throws graph_error naming the variable when it was never initialized.
    [[nodiscard]] tensor read() const {
        std::shared_lock lock(mu);
        if (!value.valid()) {
            throw graph_error("attempting to use uninitialized variable '" + name + "'",
                              location::at_tensor(name),
                              "run its initializer (e.g. the 'init' target) or restore it from a checkpoint first");
        }
        return value;
    }
    /// Replaces the value (validate_shape checks the declared shape). Throws invalid_argument_error.
    void assign(const tensor& v, bool validate_shape = true) {
        if (v.type() != type && type != dtype::invalid) {
            throw invalid_argument_error(detail::cat("assigning ", v.describe(), " to variable '", name,
                                                     "' of dtype ", dtype_name(type)),
                                         location::at_tensor(name));
        }
        if (validate_shape && !declared_shape.compatible_with(v.shape())) {
            throw invalid_argument_error(detail::cat("assigning shape ", v.shape().str(), " to variable '", name,
                                                     "' declared ", declared_shape.str()),
                                         location::at_tensor(name), "pass a value of the declared shape");
        }
        std::unique_lock lock(mu);
        value = v;
    }

    /// Replaces the value with `now` if it is still `was` (same memory): a device copy of a value
    /// read on the host takes its place. Returns whether it did. Never throws.
    bool replace_if(const tensor& was, const tensor& now) {
        std::unique_lock lock(mu);
        if (!value.shares_buffer_with(was) || value.byte_offset() != was.byte_offset()) return false;
        value = now;
        return true;
    }

    /// Runs f(value) under the write lock, as it is (device kernels make it private themselves:
    /// tensor::clone() is host-only). Throws like read().
    template <class F>
    void modify(F&& f) {
        std::unique_lock lock(mu);
        if (!value.valid()) {
            throw graph_error("attempting to update uninitialized variable '" + name + "'", location::at_tensor(name),
                              "run its initializer or restore it first");
        }
        f(value);
    }

    /// Runs f(value) with the value made private to this variable first (copy-on-write), so an
    /// in-place update never changes a tensor someone read before. Throws like read().
    template <class F>
    void update_in_place(F&& f) {
        std::unique_lock lock(mu);
        if (!value.valid()) {
            throw graph_error("attempting to update uninitialized variable '" + name + "'", location::at_tensor(name),
                              "run its initializer or restore it first");
        }
        if (!value.buffer_unique()) value = value.clone();
        f(value);
    }
};

/// The store key of a VariableV2/VarHandleOp node: "container/shared_name", with the node name
/// when shared_name is empty (TF's resource-manager rule). Never throws (except bad_alloc).
inline std::string variable_key(const node& n) {
    std::string shared, container;
    if (auto* a = n.attr("shared_name")) shared = a->s();
    if (auto* a = n.attr("container")) container = a->s();
    std::string k = shared.empty() ? n.name : shared;
    return container.empty() ? k : container + "/" + k;
}

/// All variables of a session (or shared between sessions).
class variable_store {
public:
    /// The variable under `key`, created (uninitialized) with dtype/shape on first use.
    std::shared_ptr<variable> get_or_create(const std::string& key, dtype t, const graft::shape& s) {
        std::lock_guard lock(mu_);
        auto& v = vars_[key];
        if (!v) {
            v = std::make_shared<variable>();
            v->name = key;
            v->type = base_type(t);
            v->declared_shape = s;
        }
        return v;
    }
    /// The variable under `key`, or nullptr.
    [[nodiscard]] std::shared_ptr<variable> find(const std::string& key) const {
        std::lock_guard lock(mu_);
        auto it = vars_.find(key);
        return it == vars_.end() ? nullptr : it->second;
    }
    /// The variable under `key`; throws not_found_error when absent.
    [[nodiscard]] std::shared_ptr<variable> at(const std::string& key) const {
        auto v = find(key);
        if (!v) throw not_found_error("no variable '" + key + "' in this session", location::at_tensor(key));
        return v;
    }
    /// Keys of all variables, sorted.
    [[nodiscard]] std::vector<std::string> keys() const {
        std::lock_guard lock(mu_);
        std::vector<std::string> k;
        for (auto& [n, _] : vars_) k.push_back(n);
        return k;
    }
    [[nodiscard]] std::size_t size() const {
        std::lock_guard lock(mu_);
        return vars_.size();
    }

private:
    mutable std::mutex mu_;
    std::map<std::string, std::shared_ptr<variable>> vars_;
};

}  // namespace graft::exec
