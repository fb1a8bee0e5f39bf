// graft/exec/cpu_kernels/nn.hpp — matmul, convolution, pooling, batch norm, softmax/cross-entropy,
// random and optimizer-apply ops (graft/ops/nn_all.hpp) bound to their TF op types.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "graft/exec/kernel.hpp"
#include "graft/exec/cpu_kernels/nn_params.hpp"
#include "graft/exec/session.hpp"
#include "graft/ops/bias_add.hpp"
#include "graft/ops/candidate_sampling.hpp"
#include "graft/ops/nn_all.hpp"
#include "graft/ops/random_more.hpp"
#include "graft/ops/unary.hpp"

namespace graft::exec::kernels {

namespace impl {
/// Seeded like TF: the node's seed/seed2 attrs; the generator lives as long as the session.
inline ops::guarded_philox& generator(kernel_context& c) {
    return c.state().node_state<ops::guarded_philox>(c.name(), [&] {
        return ops::guarded_philox(c.attr_or<std::int64_t>("seed", 0), c.attr_or<std::int64_t>("seed2", 0));
    });
}
/// A candidate sampler node's state across runs: its generator and its sampler (made on the first
/// run; a learned unigram sampler's counts grow with every run), used by one run at a time.
struct candidate_sampler_state {
    candidate_sampler_state(std::int64_t seed, std::int64_t seed2) : gen(seed, seed2) {}
    std::mutex mu;
    ops::guarded_philox gen;
    std::optional<ops::candidate_sampler> sampler;
};
/// The range sampler the node's op type and attrs ask for. Throws as the candidate_sampler factories.
inline ops::candidate_sampler make_candidate_sampler(kernel_context& c) {
    const std::string& op = c.n().op;
    if (op == "AllCandidateSampler") return ops::candidate_sampler::all(c.attr_int("num_sampled"));
    const std::int64_t range_max = c.attr_int("range_max");
    if (op == "UniformCandidateSampler") return ops::candidate_sampler::uniform(range_max);
    if (op == "LogUniformCandidateSampler") return ops::candidate_sampler::log_uniform(range_max);
    if (op != "FixedUnigramCandidateSampler") return ops::candidate_sampler::learned_unigram(range_max);
    const std::string& vocab_file = c.attr_string("vocab_file");
    const auto& unigrams = c.attr("unigrams").list_of<float>();
    if (vocab_file.empty() == unigrams.empty()) {
        c.fail(vocab_file.empty() ? "Must provide either vocab_file or unigrams."
                                  : "Must only provide one of vocab_file and unigrams.");
    }
    const float distortion = c.attr_float("distortion");
    const std::int64_t reserved = c.attr_int("num_reserved_ids"), shards = c.attr_int("num_shards"), shard = c.attr_int("shard");
    if (!vocab_file.empty()) {
        return ops::candidate_sampler::fixed_unigram_file(range_max, vocab_file, distortion, reserved, shards, shard);
    }
    return ops::candidate_sampler::fixed_unigram(range_max, unigrams, distortion, reserved, shards, shard);
}
/// Runs an optimizer apply op: inputs `slots` (var first) are variables updated in place; returns
/// the variable for the ref output of the non-resource form.
template <class F>
void apply_op(kernel_context& c, int num_var_inputs, F&& f) {
    std::vector<std::shared_ptr<variable>> vars;
    for (int i = 0; i < num_var_inputs; ++i) vars.push_back(c.variable_input(i));
    // Slots first (made private), then the variable itself runs the update.
    std::vector<tensor> slot_values;
    for (int i = 1; i < num_var_inputs; ++i) {
        vars[static_cast<std::size_t>(i)]->update_in_place([&](tensor& t) { slot_values.push_back(t); });
    }
    vars[0]->update_in_place([&](tensor& var) { f(var, slot_values); });
    if (!c.raw_input(0).is_resource && c.num_outputs() > 0) c.set_output_value(0, value::ref(vars[0]));
}
/// The fused_ops of _FusedConv2D / _FusedMatMul, parsed (once per plan step, through memo):
/// ["BiasAdd"] or ["BiasAdd", activation] with activation Relu, Relu6, Elu or LeakyRelu, the bias
/// being args[0] (input 2).
struct fused_epilogue_spec {
    std::string activation;                        ///< empty: BiasAdd alone
    std::optional<ops::bias_activation> one_pass;  ///< bias_activation_inplace's form, where it has one
    float alpha = 0.2f;                            ///< LeakyRelu's
};

/// Reads fused_ops. Throws unimplemented_error naming the node for any other list.
inline fused_epilogue_spec parse_fused_epilogue(const kernel_context& c) {
    static const std::vector<std::string> no_ops;
    const attr_value* listed = c.find_attr("fused_ops");
    const std::vector<std::string>& ops_list = listed ? listed->list_of<std::string>() : no_ops;
    fused_epilogue_spec spec;
    if (ops_list.size() == 2) spec.activation = ops_list[1];
    const std::string& act = spec.activation;
    const bool known = act.empty() || act == "Relu" || act == "Relu6" || act == "Elu" || act == "LeakyRelu";
    if (ops_list.empty() || ops_list.size() > 2 || ops_list[0] != "BiasAdd" || c.num_inputs() != 3 || !known) {
        std::string list;
        for (auto& o : ops_list) list += (list.empty() ? "" : ", ") + o;
        c.fail(detail::cat("fused_ops [", list, "] is not supported (graft runs BiasAdd, optionally followed by ",
                           "Relu, Relu6, Elu or LeakyRelu)"),
               "rewrite the node as its unfused ops");
    }
    if (act.empty()) spec.one_pass = ops::bias_activation::none;
    if (act == "Relu") spec.one_pass = ops::bias_activation::relu;
    if (act == "Relu6") spec.one_pass = ops::bias_activation::relu6;
    if (act == "LeakyRelu") {
        spec.one_pass = ops::bias_activation::leaky_relu;
        spec.alpha = c.attr_or<float>("leakyrelu_alpha", 0.2f);
    }
    return spec;
}

/// The epilogue of _FusedConv2D / _FusedMatMul, in place on the product y: the same ops as the
/// unfused nodes, so the same values (float32 NHWC with no activation, Relu, Relu6 or LeakyRelu:
/// bias and activation in one pass, bias_activation_inplace).
inline tensor fused_epilogue(kernel_context& c, const fused_epilogue_spec& spec, tensor y,
                             std::string_view data_format) {
    const tensor& bias = c.input(2);
    if (spec.one_pass && data_format == "NHWC" && y.type() == dtype::float32 && bias.type() == dtype::float32 &&
        y.dev().is_cpu() && y.rank() >= 1 && bias.rank() == 1 && bias.dim(0) == y.dim(y.rank() - 1)) {
        ops::bias_activation_inplace(y, bias, *spec.one_pass, spec.alpha);
        return y;
    }
    y = ops::bias_add(y, bias, data_format, &y);
    const std::string& act = spec.activation;
    if (act == "Relu") return ops::relu(y, &y);
    if (act == "Relu6") return ops::relu6(y, &y);
    if (act == "Elu") return ops::elu(y, &y);
    if (act == "LeakyRelu") return ops::leaky_relu(y, spec.alpha, &y);
    return y;
}

/// MatMul / _FusedMatMul's transposes and, when b is a float32 matrix constant of the graph
/// (input_is_constant: a layer's weights), b packed for the GEMM once per plan step, so products
/// of more than one row do not pack the weights again on every run (MLP 784-512-512-10 at batch
/// 128: packing B was 8.7% of the forward pass).
struct matmul_spec {
    bool transpose_a = false, transpose_b = false;
    std::shared_ptr<const ops::gemm::packed_b<float>> b;
    [[nodiscard]] ops::matmul_params params() const { return {transpose_a, transpose_b, b.get()}; }
};
inline matmul_spec read_matmul_spec(const kernel_context& c) {
    matmul_spec s{c.attr_or<bool>("transpose_a", false), c.attr_or<bool>("transpose_b", false), nullptr};
    if (c.input_is_constant(1) && c.dev().is_cpu()) s.b = ops::pack_matmul_b(c.input(1), s.transpose_b);
    return s;
}

}  // namespace impl

inline void register_nn(kernel_registry& r) {
    r.add("MatMul", [](kernel_context& c) {
        const auto s = c.memo<impl::matmul_spec>([&] { return impl::read_matmul_spec(c); });
        c.set_output(0, ops::matmul(c.input(0), c.input(1), s->params()));
    });
    auto bmm = [](kernel_context& c) {
        ops::batch_matmul_params p{c.attr_or<bool>("adj_x", false), c.attr_or<bool>("adj_y", false)};
        c.set_output(0, ops::batch_matmul(c.input(0), c.input(1), p));
    };
    r.add("BatchMatMul", bmm);
    r.add("BatchMatMulV2", bmm);
    r.add("BatchMatMulV3", bmm);
    r.add("Conv2D", [](kernel_context& c) { c.set_output(0, ops::conv2d(c.input(0), c.input(1), *impl::conv_params(c))); });
    r.add("_FusedConv2D", [](kernel_context& c) {
        struct spec {
            ops::conv2d_params conv;
            impl::fused_epilogue_spec epilogue;
        };
        const auto s = c.memo<spec>([&] {
            if (c.attr_or<std::string>("filter_format", "HWIO") != "HWIO") c.fail("only filter_format HWIO is supported");
            return spec{impl::read_conv_params(c), impl::parse_fused_epilogue(c)};
        });
        const tensor& bias = c.input(2);
        const tensor &x = c.input(0), &f = c.input(1);
        if (s->epilogue.one_pass && s->conv.data_format == "NHWC" && x.type() == dtype::float32 &&
            bias.type() == dtype::float32 && bias.rank() == 1 && f.rank() == 4 && bias.dim(0) == f.dim(3)) {
            // bias and activation on each stretch of the output as the convolution writes it
            const ops::bias_act_epilogue epilogue(bias.data<float>(), bias.dim(0), *s->epilogue.one_pass, s->epilogue.alpha);
            c.set_output(0, ops::conv2d(x, f, s->conv, &epilogue));
            return;
        }
        c.set_output(0, impl::fused_epilogue(c, s->epilogue, ops::conv2d(x, f, s->conv), s->conv.data_format));
    });
    r.add("_FusedMatMul", [](kernel_context& c) {
        struct spec {
            impl::matmul_spec mm;
            impl::fused_epilogue_spec epilogue;
        };
        const auto s = c.memo<spec>([&] { return spec{impl::read_matmul_spec(c), impl::parse_fused_epilogue(c)}; });
        const tensor &a = c.input(0), &b = c.input(1), &bias = c.input(2);
        if (s->epilogue.one_pass && a.type() == dtype::float32 && b.type() == dtype::float32 &&
            bias.type() == dtype::float32 && bias.rank() == 1 && b.rank() == 2 &&
            bias.dim(0) == b.dim(s->mm.transpose_b ? 0 : 1)) {
            // bias and activation on each thread's rows of the product as it finishes them: a pass
            // afterwards on one thread read the other core's rows, and the next layer's share read
            // them back (MLP 784-512-512-10 at batch 128 on 2 threads, alternating in one process:
            // 575-614 -> 555-596 us for the three layers)
            const ops::bias_act_epilogue epilogue(bias.data<float>(), bias.dim(0), *s->epilogue.one_pass,
                                                  s->epilogue.alpha);
            const auto rows = epilogue.rows();
            ops::matmul_params p = s->mm.params();
            p.epilogue = &rows;
            c.set_output(0, ops::matmul(a, b, p));
            return;
        }
        c.set_output(0, impl::fused_epilogue(c, s->epilogue, ops::matmul(a, b, s->mm.params()), "NHWC"));
    });
    r.add("Conv2DBackpropInput", [](kernel_context& c) {
        c.set_output(0, ops::conv2d_backprop_input(c.input(0), c.input(1), c.input(2), *impl::conv_params(c)));
    });
    r.add("Conv2DBackpropFilter", [](kernel_context& c) {
        c.set_output(0, ops::conv2d_backprop_filter(c.input(0), c.input(1), c.input(2), *impl::conv_params(c)));
    });
    r.add("DepthwiseConv2dNative", [](kernel_context& c) {
        c.set_output(0, ops::depthwise_conv2d_native(c.input(0), c.input(1), *impl::conv_params(c)));
    });
    r.add("DepthwiseConv2dNativeBackpropInput", [](kernel_context& c) {
        c.set_output(0, ops::depthwise_conv2d_native_backprop_input(c.input(0), c.input(1), c.input(2), *impl::conv_params(c)));
    });
    r.add("DepthwiseConv2dNativeBackpropFilter", [](kernel_context& c) {
        c.set_output(0, ops::depthwise_conv2d_native_backprop_filter(c.input(0), c.input(1), c.input(2), *impl::conv_params(c)));
    });
    r.add("MaxPool", [](kernel_context& c) { c.set_output(0, ops::max_pool(c.input(0), *impl::pool_params(c))); });
    r.add("AvgPool", [](kernel_context& c) { c.set_output(0, ops::avg_pool(c.input(0), *impl::pool_params(c))); });
    r.add("MaxPoolGrad", [](kernel_context& c) {
        c.set_output(0, ops::max_pool_grad(c.input(0), c.input(1), c.input(2), *impl::pool_params(c)));
    });
    // MaxPoolV2 / MaxPoolGradV2: ksize and strides are int32 inputs, not attrs (read every run).
    auto pool_v2 = [](kernel_context& c, int ksize_input) {
        ops::pool_params p;
        p.ksize = ops::op_detail::int_list(c.n().op, c.input(ksize_input), "ksize");
        p.strides = ops::op_detail::int_list(c.n().op, c.input(ksize_input + 1), "strides");
        p.padding = c.attr_string("padding");
        p.data_format = c.attr_or<std::string>("data_format", "NHWC");
        return p;
    };
    kernel_def v2_host;
    v2_host.host_inputs = {1, 2};
    r.add("MaxPoolV2", [pool_v2](kernel_context& c) { c.set_output(0, ops::max_pool(c.input(0), pool_v2(c, 1))); }, v2_host);
    kernel_def grad_v2_host;
    grad_v2_host.host_inputs = {3, 4};
    r.add("MaxPoolGradV2", [pool_v2](kernel_context& c) {
        c.set_output(0, ops::max_pool_grad(c.input(0), c.input(1), c.input(2), pool_v2(c, 3)));
    }, grad_v2_host);
    r.add("AvgPoolGrad", [](kernel_context& c) {
        c.set_output(0, ops::avg_pool_grad(c.input(0), c.input(1), *impl::pool_params(c)));
    });
    for (int version : {1, 2, 3}) {
        std::string name = version == 1 ? "FusedBatchNorm" : "FusedBatchNormV" + std::to_string(version);
        r.add(name, [version](kernel_context& c) {
            ops::fused_batch_norm_params p;
            p.epsilon = c.attr_or<float>("epsilon", 0.0001f);
            p.exponential_avg_factor = c.attr_or<float>("exponential_avg_factor", 1.0f);
            p.data_format = c.attr_or<std::string>("data_format", "NHWC");
            p.is_training = c.attr_or<bool>("is_training", true);
            p.version = version;
            auto res = ops::fused_batch_norm(c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), p);
            c.set_output(0, res.y);
            c.set_output(1, res.batch_mean);
            c.set_output(2, res.batch_variance);
            c.set_output(3, res.reserve_space_1);
            c.set_output(4, res.reserve_space_2);
            if (c.num_outputs() > 5) c.set_output(5, res.reserve_space_3);
        });
        std::string grad = version == 1 ? "FusedBatchNormGrad" : "FusedBatchNormGradV" + std::to_string(version);
        r.add(grad, [](kernel_context& c) {
            ops::fused_batch_norm_grad_params p;
            p.epsilon = c.attr_or<float>("epsilon", 0.0001f);
            p.data_format = c.attr_or<std::string>("data_format", "NHWC");
            p.is_training = c.attr_or<bool>("is_training", true);
            auto res = ops::fused_batch_norm_grad(c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), p);
            c.set_output(0, res.x_backprop);
            c.set_output(1, res.scale_backprop);
            c.set_output(2, res.offset_backprop);
            c.set_output(3, res.reserve_space_3);
            c.set_output(4, res.reserve_space_4);
        });
    }
    r.add("Softmax", [](kernel_context& c) { c.set_output(0, ops::softmax(c.input(0))); });
    r.add("LogSoftmax", [](kernel_context& c) { c.set_output(0, ops::log_softmax(c.input(0))); });
    r.add("SoftmaxCrossEntropyWithLogits", [](kernel_context& c) {
        auto res = ops::softmax_cross_entropy_with_logits(c.input(0), c.input(1));
        c.set_output(0, res.loss);
        c.set_output(1, res.backprop);
    });
    r.add("SparseSoftmaxCrossEntropyWithLogits", [](kernel_context& c) {
        auto res = ops::sparse_softmax_cross_entropy_with_logits(c.input(0), c.input(1));
        c.set_output(0, res.loss);
        c.set_output(1, res.backprop);
    });
    r.add("RandomUniform", [](kernel_context& c) {
        c.set_output(0, ops::random_uniform(c.input(0), c.attr_type("dtype"), impl::generator(c)));
    });
    r.add("RandomStandardNormal", [](kernel_context& c) {
        c.set_output(0, ops::random_standard_normal(c.input(0), c.attr_type("dtype"), impl::generator(c)));
    });
    r.add("TruncatedNormal", [](kernel_context& c) {
        c.set_output(0, ops::truncated_normal(c.input(0), c.attr_type("dtype"), impl::generator(c)));
    });
    r.add("RandomShuffle", [](kernel_context& c) { c.set_output(0, ops::random_shuffle(c.input(0), impl::generator(c))); });
    r.add("Multinomial", [](kernel_context& c) {
        c.set_output(0, ops::multinomial(c.input(0), c.input(1), c.attr_or("output_dtype", dtype::int64), impl::generator(c)));
    });
    r.add("RandomUniformInt", [](kernel_context& c) {
        c.set_output(0, ops::random_uniform_int(c.input(0), c.input(1), c.input(2), impl::generator(c)));
    });
    kernel_def shape_on_host;
    shape_on_host.host_inputs = {0};
    r.add("RandomGamma", [](kernel_context& c) { c.set_output(0, ops::random_gamma(c.input(0), c.input(1), impl::generator(c))); },
          shape_on_host);
    r.add("RandomGammaGrad", [](kernel_context& c) { c.set_output(0, ops::random_gamma_grad(c.input(0), c.input(1))); });
    r.add("RandomPoisson", [](kernel_context& c) {
        c.set_output(0, ops::random_poisson(c.input(0), c.input(1), c.input(1).type(), impl::generator(c)));
    }, shape_on_host);
    r.add("RandomPoissonV2", [](kernel_context& c) {
        c.set_output(0, ops::random_poisson(c.input(0), c.input(1), c.attr_or("dtype", dtype::int64), impl::generator(c)));
    }, shape_on_host);
    // Candidate samplers: one sampler and generator per node (TF's kernel object), one run at a time.
    for (const char* op : {"UniformCandidateSampler", "LogUniformCandidateSampler", "LearnedUnigramCandidateSampler",
                           "ThreadUnsafeUnigramCandidateSampler", "FixedUnigramCandidateSampler", "AllCandidateSampler"}) {
        r.add(op, [](kernel_context& c) {
            auto& st = c.state().node_state<std::shared_ptr<impl::candidate_sampler_state>>(c.name(), [&] {
                return std::make_shared<impl::candidate_sampler_state>(c.attr_or<std::int64_t>("seed", 0),
                                                                       c.attr_or<std::int64_t>("seed2", 0));
            });
            std::lock_guard lock(st->mu);
            if (!st->sampler) st->sampler = impl::make_candidate_sampler(c);
            auto out = ops::sample_candidates(*st->sampler, c.input(0), c.attr_int("num_true"), c.attr_int("num_sampled"),
                                              c.attr_bool("unique"), st->gen);
            c.set_output(0, std::move(out.sampled_candidates));
            c.set_output(1, std::move(out.true_expected_count));
            c.set_output(2, std::move(out.sampled_expected_count));
        });
    }
    r.add("ComputeAccidentalHits", [](kernel_context& c) {
        auto out = ops::compute_accidental_hits(c.input(0), c.input(1), c.attr_int("num_true"));
        c.set_output(0, std::move(out.indices));
        c.set_output(1, std::move(out.ids));
        c.set_output(2, std::move(out.weights));
    });

    // Optimizers: the TF1 (ref) and resource forms share one update.
    auto both = [&r](const std::string& op, auto fn) {
        r.add(op, fn);
        r.add("Resource" + op, fn);
    };
    both("ApplyGradientDescent", [](kernel_context& c) {
        tensor alpha = c.input(1), delta = c.input(2);
        impl::apply_op(c, 1, [&](tensor& var, auto&) { ops::apply_gradient_descent(var, alpha, delta); });
    });
    // MatMul then Apply(Resource)GradientDescent, fused by the executor's remapper (fuse_chains):
    // inputs var, alpha, a, b; the product's transposes as attrs
    for (const char* op : {"_MatMulApplyGradientDescent", "_MatMulResourceApplyGradientDescent"}) {
        r.add(op, [](kernel_context& c) {
            tensor alpha = c.input(1), a = c.input(2), b = c.input(3);
            const bool ta = c.attr_or<bool>("transpose_a", false), tb = c.attr_or<bool>("transpose_b", false);
            impl::apply_op(c, 1, [&](tensor& var, auto&) { ops::apply_gradient_descent_of_product(var, alpha, a, b, ta, tb); });
        });
    }
    both("ApplyMomentum", [](kernel_context& c) {
        tensor lr = c.input(2), grad = c.input(3), mom = c.input(4);
        ops::momentum_params p{c.attr_or<bool>("use_nesterov", false)};
        impl::apply_op(c, 2, [&](tensor& var, auto& s) { ops::apply_momentum(var, s[0], lr, grad, mom, p); });
    });
    both("ApplyAdam", [](kernel_context& c) {
        tensor b1p = c.input(3), b2p = c.input(4), lr = c.input(5), b1 = c.input(6), b2 = c.input(7),
               eps = c.input(8), grad = c.input(9);
        ops::adam_params p{c.attr_or<bool>("use_nesterov", false)};
        impl::apply_op(c, 3, [&](tensor& var, auto& s) {
            ops::apply_adam(var, s[0], s[1], b1p, b2p, lr, b1, b2, eps, grad, p);
        });
    });
    both("ApplyRMSProp", [](kernel_context& c) {
        tensor lr = c.input(3), rho = c.input(4), mom = c.input(5), eps = c.input(6), grad = c.input(7);
        impl::apply_op(c, 3, [&](tensor& var, auto& s) { ops::apply_rms_prop(var, s[0], s[1], lr, rho, mom, eps, grad); });
    });
    both("ApplyCenteredRMSProp", [](kernel_context& c) {
        tensor lr = c.input(4), rho = c.input(5), mom = c.input(6), eps = c.input(7), grad = c.input(8);
        impl::apply_op(c, 4, [&](tensor& var, auto& s) {
            ops::apply_centered_rms_prop(var, s[0], s[1], s[2], lr, rho, mom, eps, grad);
        });
    });
    both("ApplyAdagrad", [](kernel_context& c) {
        tensor lr = c.input(2), grad = c.input(3);
        ops::adagrad_params p{c.attr_or<bool>("update_slots", true)};
        impl::apply_op(c, 2, [&](tensor& var, auto& s) { ops::apply_adagrad(var, s[0], lr, grad, p); });
    });
    both("ApplyAdadelta", [](kernel_context& c) {
        tensor lr = c.input(3), rho = c.input(4), eps = c.input(5), grad = c.input(6);
        impl::apply_op(c, 3, [&](tensor& var, auto& s) { ops::apply_adadelta(var, s[0], s[1], lr, rho, eps, grad); });
    });
    both("ApplyFtrl", [](kernel_context& c) {
        tensor grad = c.input(3), lr = c.input(4), l1 = c.input(5), l2 = c.input(6), lr_power = c.input(7);
        ops::ftrl_params p{c.attr_or<bool>("multiply_linear_by_lr", false)};
        impl::apply_op(c, 3, [&](tensor& var, auto& s) {
            ops::apply_ftrl(var, s[0], s[1], grad, lr, l1, l2, lr_power, p);
        });
    });
    r.add("ResourceApplyKerasMomentum", [](kernel_context& c) {
        tensor lr = c.input(2), grad = c.input(3), mom = c.input(4);
        ops::momentum_params p{c.attr_or<bool>("use_nesterov", false)};
        impl::apply_op(c, 2, [&](tensor& var, auto& s) { ops::apply_keras_momentum(var, s[0], lr, grad, mom, p); });
    });
    both("ApplyAdagradV2", [](kernel_context& c) {
        tensor lr = c.input(2), eps = c.input(3), grad = c.input(4);
        ops::adagrad_params p{c.attr_or<bool>("update_slots", true)};
        impl::apply_op(c, 2, [&](tensor& var, auto& s) { ops::apply_adagrad_v2(var, s[0], lr, eps, grad, p); });
    });
}

}  // namespace graft::exec::kernels
