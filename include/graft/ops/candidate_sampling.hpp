// graft/ops/candidate_sampling.hpp — TensorFlow's candidate samplers (the ops behind
// tf.nn.sampled_softmax_loss, tf.nn.nce_loss and tf.random.*_candidate_sampler) and
// ComputeAccidentalHits, drawing the same numbers as TF's CPU kernels (candidate_sampler_ops.cc,
// range_sampler.cc) for the same seeds.
//
//   auto s = graft::ops::candidate_sampler::log_uniform(/*range_max=*/50);
//   graft::ops::guarded_philox gen(/*seed=*/1, /*seed2=*/2);   // one per op node, like TF
//   auto r = graft::ops::sample_candidates(s, labels /*int64 [batch, num_true]*/, 1, 10, true, gen);
//   // r.sampled_candidates int64 [10], r.true_expected_count float [batch, 1], r.sampled_expected_count
//   auto hits = graft::ops::compute_accidental_hits(labels, r.sampled_candidates, 1);
//
// How TF draws (and so how these do): each run reserves 2048 * num_sampled 32-bit values of the
// node's Philox generator (512 * num_sampled outputs of 128 bits) and reads them one 32-bit word at a
// time (TF's SimplePhilox: a double takes two words, a 64-bit integer two words low first, integers
// below n by rejection). The samplers:
//   * uniform: Uniform64(range) — P(k) = 1 / range;
//   * log-uniform: floor(exp(RandDouble() * log(range + 1))) - 1 (mod range) —
//     P(k) = log((k + 2) / (k + 1)) / log(range + 1);
//   * learned unigram: every class starts with count 1; a sample is a uniform pick below the total
//     count walked down a binary tree of count sums; after each run the true classes add 1 each
//     (TF's WeightedPicker / UnigramSampler::Update) — P(k) = count(k) / total;
//   * fixed unigram: weights w^distortion (reserved ids first with weight 0; shards keep every
//     num_shards-th id), drawn with Walker's alias table (one float and one Uniform(n)) —
//     P(k) = w(k) / sum w;
//   * all: the classes 0..num_sampled-1, expected count 1.
// unique = true rejects repeats until num_sampled distinct values were drawn, counting the tries;
// expected counts are then 1 - (1 - p)^tries (as -expm1(tries * log1p(-p)) in float), else p * num_sampled.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/ops/random.hpp"

namespace graft::ops {

/// TF's SimplePhilox: a Philox generator read one 32-bit word at a time.
class simple_philox {
public:
    explicit simple_philox(const philox4x32& gen) : gen_(gen) {}
    std::uint32_t rand32() {
        if (used_ == 4) {
            buf_ = gen_();
            used_ = 0;
        }
        return buf_[static_cast<std::size_t>(used_++)];
    }
    std::uint64_t rand64() {
        const std::uint32_t lo = rand32();
        const std::uint32_t hi = rand32();
        return lo | (std::uint64_t{hi} << 32);
    }
    /// Uniform in [0, 1) from one word.
    float rand_float() { return nn_detail::uint32_to_float(rand32()); }
    /// Uniform in [0, 1) from two words.
    double rand_double() {
        const std::uint32_t x0 = rand32();
        const std::uint32_t x1 = rand32();
        return nn_detail::uint64_to_double(x0, x1);
    }
    /// Uniform integer in [0, n) by rejection (TF's ExactUniformInt over 32-bit words).
    std::uint32_t uniform(std::uint32_t n) { return exact_uniform<std::uint32_t>(n, [this] { return rand32(); }); }
    /// Uniform integer in [0, n) by rejection over 64-bit values.
    std::uint64_t uniform64(std::uint64_t n) { return exact_uniform<std::uint64_t>(n, [this] { return rand64(); }); }

private:
    template <class U, class F>
    static U exact_uniform(U n, F&& random) {
        if (n == 0) return static_cast<U>(random() * n);  // consumes a value, as TF does
        if ((n & (n - 1)) == 0) return static_cast<U>(random() & (n - 1));
        const U rem = static_cast<U>(static_cast<U>(static_cast<U>(~U{0}) % n) + 1);
        U r;
        do {
            r = random();
        } while (r < rem);
        return static_cast<U>(r % n);
    }
    philox4x32 gen_;
    philox4x32::result_type buf_{};
    int used_ = 4;
};

namespace candidate_detail {

/// TF's WeightedPicker: int32 weights at the leaves of a complete binary tree of sums.
class weighted_picker {
public:
    explicit weighted_picker(std::int64_t n) {
        int levels = 1;
        while ((std::int64_t{1} << (levels - 1)) < n) ++levels;
        level_.resize(static_cast<std::size_t>(levels));
        for (int l = 0; l < levels; ++l) level_[static_cast<std::size_t>(l)].assign(std::size_t{1} << l, 0);
        auto& leaves = level_.back();
        for (std::int64_t i = 0; i < n; ++i) leaves[static_cast<std::size_t>(i)] = 1;
        for (std::size_t l = level_.size() - 1; l-- > 0;) {
            for (std::size_t i = 0; i < level_[l].size(); ++i) level_[l][i] = level_[l + 1][2 * i] + level_[l + 1][2 * i + 1];
        }
    }
    [[nodiscard]] std::int32_t total() const { return level_[0][0]; }
    [[nodiscard]] std::int32_t weight(std::int64_t i) const { return level_.back()[static_cast<std::size_t>(i)]; }
    void set_weight(std::int64_t i, std::int32_t w) {
        const std::int32_t delta = w - weight(i);
        auto idx = static_cast<std::size_t>(i);
        for (std::size_t l = level_.size(); l-- > 0;) {
            level_[l][idx] += delta;
            idx >>= 1;
        }
    }
    /// A leaf with probability weight / total; -1 when the total is 0.
    [[nodiscard]] std::int64_t pick(simple_philox& rnd) const {
        if (total() == 0) return -1;
        std::int32_t position = static_cast<std::int32_t>(rnd.uniform(static_cast<std::uint32_t>(total())));
        std::size_t index = 0;
        for (std::size_t l = 1; l < level_.size(); ++l) {
            const std::int32_t left = level_[l][2 * index];
            if (position < left) {
                index = 2 * index;
            } else {
                index = 2 * index + 1;
                position -= left;
            }
        }
        return static_cast<std::int64_t>(index);
    }

private:
    std::vector<std::vector<std::int32_t>> level_;
};

/// TF's DistributionSampler: Walker's alias table over float weights.
class alias_table {
public:
    alias_table() = default;
    explicit alias_table(const std::vector<float>& weights) {
        const std::size_t n = weights.size();
        entries_.assign(n, {0.0f, -1});
        std::vector<double> pr(n);
        double sum = 0;
        for (float w : weights) sum += w;
        std::vector<std::size_t> high, low;
        for (std::size_t i = 0; i < n; ++i) {
            pr[i] = static_cast<double>(weights[i] * static_cast<float>(n)) / sum;  // float product, as TF
            (pr[i] < 1.0 ? low : high).push_back(i);
        }
        while (!high.empty() && !low.empty()) {
            const std::size_t l = low.back();
            low.pop_back();
            const std::size_t h = high.back();
            high.pop_back();
            entries_[l].second = static_cast<std::int64_t>(h);
            pr[h] -= 1.0 - pr[l];
            (pr[h] < 1.0 ? low : high).push_back(h);
        }
        for (std::size_t i = 0; i < n; ++i) entries_[i].first = static_cast<float>(pr[i]);
        for (auto* rest : {&high, &low}) {
            for (std::size_t i : *rest) entries_[i] = {1.0f, static_cast<std::int64_t>(i)};
        }
    }
    [[nodiscard]] std::int64_t sample(simple_philox& rnd) const {
        const float r = rnd.rand_float();
        const std::uint32_t idx = rnd.uniform(static_cast<std::uint32_t>(entries_.size()));
        return r < entries_[idx].first ? static_cast<std::int64_t>(idx) : entries_[idx].second;
    }

private:
    std::vector<std::pair<float, std::int64_t>> entries_;
};

inline std::string trim(std::string s) {
    const char* ws = " \t\r\n\v\f";
    s.erase(0, s.find_first_not_of(ws));
    s.erase(s.find_last_not_of(ws) + 1);
    return s;
}

}  // namespace candidate_detail

/// One of TF's range samplers (the distribution a candidate sampler op draws from).
class candidate_sampler {
public:
    enum class kind { uniform, log_uniform, learned_unigram, fixed_unigram, all };

    /// UniformCandidateSampler's. Throws invalid_argument_error when range_max <= 0.
    static candidate_sampler uniform(std::int64_t range_max) { return {kind::uniform, checked_range(range_max)}; }
    /// LogUniformCandidateSampler's. Throws invalid_argument_error when range_max <= 0.
    static candidate_sampler log_uniform(std::int64_t range_max) {
        candidate_sampler s{kind::log_uniform, checked_range(range_max)};
        s.log_range_ = std::log1p(static_cast<double>(range_max));
        return s;
    }
    /// LearnedUnigramCandidateSampler's: counts start at 1 and grow by update(). Throws
    /// invalid_argument_error when range_max <= 0 or >= 2^31 - 1.
    static candidate_sampler learned_unigram(std::int64_t range_max) {
        candidate_sampler s{kind::learned_unigram, checked_unigram_range(range_max)};
        s.picker_ = candidate_detail::weighted_picker(range_max);
        return s;
    }
    /// FixedUnigramCandidateSampler's from in-memory unigrams (count or probability per id).
    /// Throws invalid_argument_error for a bad range, shard, or when range_max differs from the
    /// number of ids this shard holds.
    static candidate_sampler fixed_unigram(std::int64_t range_max, const std::vector<float>& unigrams, float distortion = 1,
                                           std::int64_t num_reserved_ids = 0, std::int64_t num_shards = 1,
                                           std::int64_t shard = 0) {
        candidate_sampler s = fixed_base(range_max, num_reserved_ids, num_shards, shard);
        std::int64_t id = static_cast<std::int64_t>(s.weights_.size());
        for (float w : unigrams) {
            if (id % num_shards == shard) s.add_weight(w, distortion);
            ++id;
        }
        s.finish_fixed();
        return s;
    }
    /// FixedUnigramCandidateSampler's from a vocabulary file: one id per line, comma-separated,
    /// the count in the last column. Throws io_error when the file cannot be read,
    /// invalid_argument_error for a line whose last column is not a number and as fixed_unigram().
    static candidate_sampler fixed_unigram_file(std::int64_t range_max, const std::string& vocab_file, float distortion = 1,
                                                std::int64_t num_reserved_ids = 0, std::int64_t num_shards = 1,
                                                std::int64_t shard = 0) {
        candidate_sampler s = fixed_base(range_max, num_reserved_ids, num_shards, shard);
        std::ifstream in(vocab_file);
        if (!in) throw io_error("FixedUnigramCandidateSampler: cannot open vocab_file '" + vocab_file + "'", location::in_file(vocab_file));
        std::int64_t id = static_cast<std::int64_t>(s.weights_.size());
        std::string line;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (id % num_shards == shard) {
                const std::string last = candidate_detail::trim(line.substr(line.rfind(',') == std::string::npos ? 0 : line.rfind(',') + 1));
                char* end = nullptr;
                errno = 0;
                const float w = last.empty() ? 0.0f : std::strtof(last.c_str(), &end);
                if (last.empty() || end != last.c_str() + last.size() || errno == ERANGE) {
                    throw invalid_argument_error("FixedUnigramCandidateSampler: wrong vocabulary format in '" + vocab_file +
                                                     "' at line: " + line,
                                                 location::in_file(vocab_file),
                                                 "each line is CSV with the id's count or probability in the last column");
                }
                s.add_weight(w, distortion);
            }
            ++id;
        }
        s.finish_fixed();
        return s;
    }
    /// AllCandidateSampler's: the classes 0..num_sampled-1. Throws invalid_argument_error when
    /// num_sampled <= 0.
    static candidate_sampler all(std::int64_t num_sampled) { return {kind::all, checked_range(num_sampled)}; }

    [[nodiscard]] kind type() const { return kind_; }
    [[nodiscard]] std::int64_t range() const { return range_; }
    [[nodiscard]] bool needs_updates() const { return kind_ == kind::learned_unigram; }

    /// One class in [0, range). Never throws.
    std::int64_t sample(simple_philox& rnd) const {
        switch (kind_) {
        case kind::uniform: return static_cast<std::int64_t>(rnd.uniform64(static_cast<std::uint64_t>(range_)));
        case kind::log_uniform: {
            const auto v = static_cast<std::int64_t>(std::exp(rnd.rand_double() * log_range_)) - 1;
            return v % range_;
        }
        case kind::learned_unigram: return picker_.pick(rnd);
        case kind::fixed_unigram: return alias_.sample(rnd);
        case kind::all: break;
        }
        return 0;
    }
    /// The probability sample() gives `value` (float, as TF computes it). Never throws.
    [[nodiscard]] float probability(std::int64_t value) const {
        switch (kind_) {
        case kind::uniform: return static_cast<float>(1.0 / static_cast<double>(range_));
        case kind::log_uniform:
            return static_cast<float>(std::log((static_cast<double>(value) + 2.0) / (static_cast<double>(value) + 1.0)) /
                                      log_range_);
        case kind::learned_unigram: return static_cast<float>(picker_.weight(value)) / static_cast<float>(picker_.total());
        case kind::fixed_unigram:
            if (value < 0 || static_cast<std::size_t>(value) >= weights_.size()) return 0.0f;
            return weights_[static_cast<std::size_t>(value)] / total_weight_;
        case kind::all: break;
        }
        return 1.0f;
    }
    /// Learned unigram: each value's count grows by 1 (while the total stays below 2^31 - 1).
    /// Values must be in [0, range). Never throws.
    void update(std::span<const std::int64_t> values) {
        if (kind_ != kind::learned_unigram) return;
        const auto room = static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::max()) - picker_.total();
        const auto n = std::min(static_cast<std::int64_t>(values.size()), room);
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t v = values[static_cast<std::size_t>(i)];
            picker_.set_weight(v, picker_.weight(v) + 1);
        }
    }

private:
    candidate_sampler(kind k, std::int64_t range) : kind_(k), range_(range) {}
    static std::int64_t checked_range(std::int64_t r) {
        if (r <= 0) throw invalid_argument_error(detail::cat("range_max must be positive, given ", r));
        return r;
    }
    static std::int64_t checked_unigram_range(std::int64_t r) {
        checked_range(r);
        if (r >= std::numeric_limits<std::int32_t>::max()) {
            throw invalid_argument_error(detail::cat("range_max must be less than 2147483647 for unigram samplers, got ", r));
        }
        return r;
    }
    static candidate_sampler fixed_base(std::int64_t range_max, std::int64_t num_reserved_ids, std::int64_t num_shards,
                                        std::int64_t shard) {
        candidate_sampler s{kind::fixed_unigram, checked_range(range_max)};
        if (num_shards < 1 || shard < 0 || shard >= num_shards) {
            throw invalid_argument_error(detail::cat("FixedUnigramCandidateSampler: shard must be in [0, num_shards), given shard ",
                                                     shard, " of num_shards ", num_shards));
        }
        for (std::int64_t id = 0; id < num_reserved_ids; ++id) {
            if (id % num_shards == shard) s.weights_.push_back(0.0f);
        }
        return s;
    }
    void add_weight(float w, float distortion) {
        w = std::pow(w, distortion);
        total_weight_ += w;
        weights_.push_back(w);
    }
    void finish_fixed() {
        if (static_cast<std::int64_t>(weights_.size()) != range_) {
            throw invalid_argument_error(detail::cat("FixedUnigramCandidateSampler: range_max is ", range_,
                                                     " but the unigrams give ", weights_.size(),
                                                     " ids (reserved ids included)"));
        }
        alias_ = candidate_detail::alias_table(weights_);
    }

    kind kind_;
    std::int64_t range_;
    double log_range_ = 0;
    candidate_detail::weighted_picker picker_{0};
    candidate_detail::alias_table alias_;
    std::vector<float> weights_;
    float total_weight_ = 0;
};

/// The three outputs of a candidate sampler op.
struct candidate_sample {
    tensor sampled_candidates;      ///< int64 [num_sampled]
    tensor true_expected_count;     ///< float [batch, num_true]
    tensor sampled_expected_count;  ///< float [num_sampled]
};

/// One run of a candidate sampler op: draws num_sampled classes from the run's reservation of
/// `gen` and, for a learned unigram sampler, then counts the true classes. Throws
/// invalid_argument_error when true_classes is not an int64 [batch, num_true] matrix, a true class
/// is outside [0, range), num_sampled or num_true < 1, or unique with num_sampled > range.
inline candidate_sample sample_candidates(candidate_sampler& sampler, const tensor& true_classes, std::int64_t num_true,
                                          std::int64_t num_sampled, bool unique, guarded_philox& gen) {
    if (num_true < 1 || num_sampled < 1) {
        throw invalid_argument_error(detail::cat("num_true and num_sampled must be >= 1, given num_true ", num_true,
                                                 ", num_sampled ", num_sampled));
    }
    if (!true_classes.valid() || true_classes.shape().rank() != 2) {
        throw invalid_argument_error(detail::cat("true_classes must be a matrix, given ", true_classes.describe()));
    }
    if (true_classes.type() != dtype::int64) {
        throw invalid_argument_error(detail::cat("true_classes must be int64, given ", true_classes.describe()));
    }
    if (true_classes.shape()[1] != num_true) {
        throw invalid_argument_error(detail::cat("true_classes must have num_true columns, expected: ", num_true,
                                                 " was: ", true_classes.shape()[1]));
    }
    if (unique && num_sampled > sampler.range()) {
        throw invalid_argument_error(detail::cat("Sampler's range is too small: unique sampling of ", num_sampled,
                                                 " classes from range ", sampler.range()));
    }
    const std::int64_t batch = true_classes.shape()[0];
    const std::span<const std::int64_t> truth(true_classes.data<std::int64_t>(), static_cast<std::size_t>(batch * num_true));
    for (std::int64_t c : truth) {
        if (c < 0 || c >= sampler.range()) {
            throw invalid_argument_error(
                detail::cat("true_candidate out of range [0, ", sampler.range(), "), received ", c));
        }
    }
    candidate_sample out{tensor(dtype::int64, shape{num_sampled}), tensor(dtype::float32, shape{batch, num_true}),
                         tensor(dtype::float32, shape{num_sampled})};
    std::int64_t* picked = out.sampled_candidates.data<std::int64_t>();
    float* true_count = out.true_expected_count.data<float>();
    float* sampled_count = out.sampled_expected_count.data<float>();

    if (sampler.type() == candidate_sampler::kind::all) {
        (void)gen.reserve_samples128(static_cast<std::uint64_t>((2048 * num_sampled + 3) / 4));
        for (std::int64_t i = 0; i < num_sampled; ++i) {
            picked[i] = i;
            sampled_count[i] = 1.0f;
        }
        for (std::size_t i = 0; i < truth.size(); ++i) true_count[i] = 1.0f;
        return out;
    }

    simple_philox rnd(gen.reserve_samples128(static_cast<std::uint64_t>((2048 * num_sampled + 3) / 4)));
    std::int64_t tries = 0;
    if (unique) {
        std::unordered_set<std::int64_t> used(static_cast<std::size_t>(num_sampled));
        std::int64_t n = 0;
        while (n < num_sampled) {
            ++tries;
            const std::int64_t v = sampler.sample(rnd);
            if (used.insert(v).second) picked[n++] = v;
        }
    } else {
        for (std::int64_t i = 0; i < num_sampled; ++i) picked[i] = sampler.sample(rnd);
        tries = num_sampled;
    }
    const int batch_size = static_cast<int>(num_sampled);
    const int num_tries = static_cast<int>(tries);
    auto expected = [&](float p) -> float {
        if (num_tries == batch_size) return p * static_cast<float>(batch_size);
        return -std::expm1(static_cast<float>(num_tries) * std::log1p(-p));
    };
    for (std::int64_t i = 0; i < num_sampled; ++i) sampled_count[i] = expected(sampler.probability(picked[i]));
    for (std::size_t i = 0; i < truth.size(); ++i) true_count[i] = expected(sampler.probability(truth[i]));
    if (sampler.needs_updates()) sampler.update(truth);
    return out;
}

/// The outputs of ComputeAccidentalHits.
struct accidental_hits {
    tensor indices;  ///< int32: the row of true_classes holding the hit
    tensor ids;      ///< int64: the hit's position in sampled_candidates
    tensor weights;  ///< float: -FLT_MAX each
};

/// TF's ComputeAccidentalHits: every (row, position) where a row's true class equals a sampled
/// candidate (the last position when a candidate repeats), rows in order. Throws
/// invalid_argument_error when true_classes is not an int64 [batch, num_true] matrix or
/// sampled_candidates not an int64 vector.
inline accidental_hits compute_accidental_hits(const tensor& true_classes, const tensor& sampled_candidates,
                                               std::int64_t num_true) {
    if (!true_classes.valid() || true_classes.shape().rank() != 2 || true_classes.shape()[1] != num_true ||
        true_classes.type() != dtype::int64) {
        throw invalid_argument_error(detail::cat("true_candidates must be an int64 batch_size * num_true matrix (num_true ",
                                                 num_true, "), given ", true_classes.describe()));
    }
    if (!sampled_candidates.valid() || sampled_candidates.shape().rank() != 1 ||
        sampled_candidates.type() != dtype::int64) {
        throw invalid_argument_error(
            detail::cat("sampled_candidates must be an int64 vector, which is typically an output from CandidateSampler, given ",
                        sampled_candidates.describe()));
    }
    const std::int64_t num_sampled = sampled_candidates.shape()[0];
    const std::int64_t* sampled = sampled_candidates.data<std::int64_t>();
    std::unordered_map<std::int64_t, std::int64_t> position;
    position.reserve(static_cast<std::size_t>(num_sampled));
    for (std::int64_t i = 0; i < num_sampled; ++i) position[sampled[i]] = i;
    std::vector<std::int32_t> rows;
    std::vector<std::int64_t> ids;
    const std::int64_t batch = true_classes.shape()[0];
    const std::int64_t* truth = true_classes.data<std::int64_t>();
    for (std::int64_t i = 0; i < batch; ++i) {
        for (std::int64_t j = 0; j < num_true; ++j) {
            if (auto it = position.find(truth[i * num_true + j]); it != position.end()) {
                rows.push_back(static_cast<std::int32_t>(i));
                ids.push_back(it->second);
            }
        }
    }
    const auto n = static_cast<std::int64_t>(rows.size());
    return {tensor::from_vector<std::int32_t>(shape{n}, rows), tensor::from_vector<std::int64_t>(shape{n}, ids),
            tensor::from_vector<float>(shape{n}, std::vector<float>(rows.size(), -FLT_MAX))};
}

}  // namespace graft::ops
