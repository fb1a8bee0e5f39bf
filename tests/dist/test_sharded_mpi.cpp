// Sharded checkpoints under mpirun (compiled into test_dist_mpi; every rank runs every case, so every
// rank makes the same collective calls): an N-rank save has TF's layout (N data files, one merged
// .index that python3-protobuf decodes as graft does) and equals a one-process Saver save tensor for
// tensor; restore reads only what a rank asks for; saves replace an old checkpoint (also one of
// another shard count) crash-safely; a failure on one rank (injected) is an error on every rank that
// names it, and leaves the previous checkpoint whole; and (driven by test_dist with
// GRAFT_TEST_SHARD_KILL_DIR) a rank that dies mid-save leaves the previous checkpoint whole.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dist/support.hpp"
#include "dist/mlp.hpp"
#include "graft/dist/data_parallel.hpp"
#include "graft/dist/sharded_checkpoint.hpp"
#include "graft/exec/session.hpp"
#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/bundle_merge.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"
#include "support/faults.hpp"
#include "support/fixtures.hpp"

namespace graft_test_sharded {

using graft::tensor;
namespace gd = graft::dist;
namespace td = graft::test::dist;
namespace fs = std::filesystem;

gd::communicator& comm() {
    static std::shared_ptr<gd::communicator> w = gd::world();
    return *w;
}

/// The MLP 784-64-10 with Adam (slots m and v, beta powers): 14 variables, one training step taken
/// so the slots are not zero, then rank 0's values on every rank.
struct model {
    td::mlp_graph m;
    std::string train;
    std::unique_ptr<graft::exec::session> s;
    std::vector<graft::variable_info> vars;
    td::dataset data = td::training_rows(64, "/nonexistent");

    explicit model(std::uint64_t seed) : m(td::build_mlp({784, 64, 10}, seed)) {
        graft::train::adam opt(0.01);
        train = opt.minimize(m.mg, m.loss);
        const std::string init = graft::train::global_variables_initializer(m.mg);
        s = std::make_unique<graft::exec::session>(m.mg.graph);
        s->run({}, {}, {init});
        vars = graft::find_variables(m.mg);
        step();
    }
    /// One Adam step on the same rows everywhere, then rank 0's values broadcast (identical bits).
    void step(std::int64_t first_row = 0) {
        s->run({{"x:0", data.features.slice(first_row, 32)}, {"y:0", data.labels.slice(first_row, 32)}}, {}, {train});
        gd::broadcast_variables(*s, 0, &comm());
    }
    /// Checkpoint key -> a copy of the current value.
    [[nodiscard]] std::map<std::string, tensor> values() const {
        std::map<std::string, tensor> out;
        for (auto& v : vars) out[v.checkpoint_key] = s->variable_value(v.node).clone();
        return out;
    }
};

/// A fresh folder for one case, the same path on every rank.
std::string case_dir(const std::string& name) {
    auto d = fs::absolute(fs::path("scratch") / ("sharded_np" + std::to_string(comm().size())) / name);
    if (comm().rank() == 0) {
        fs::remove_all(d);
        fs::create_directories(d);
    }
    comm().barrier();
    return d.string();
}

bool same_bytes(const tensor& a, const tensor& b) {
    return a.type() == b.type() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
           std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

/// True when the checkpoint at `prefix` (read by the one-process reader) holds exactly `want`.
bool holds(const std::string& prefix, const std::map<std::string, tensor>& want) {
    graft::tf::checkpoint_reader r(prefix);
    auto keys = r.keys();
    if (keys.size() != want.size()) return false;
    for (auto& [k, t] : want) {
        if (!r.contains(k) || !same_bytes(r.read(k), t)) return false;
    }
    return true;
}

using graft::test::dist::leftovers;

/// Every rank's flag, summed.
int sum_over_ranks(int flag) {
    auto t = tensor::from_vector<std::int32_t>({1}, {flag});
    comm().allreduce(t, gd::reduce_op::sum, "flag");
    return t.data<std::int32_t>()[0];
}

/// The .index decoded by python3-protobuf (SSTable blocks parsed by hand, values by graft_tf's
/// tensor_bundle_pb2): one line per entry.
const char* python_index_dump = R"PY(
import struct
from graft_tf import tensor_bundle_pb2 as tb
def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def block(data, off, size):
    assert data[off + size] == 0, 'compressed block'
    b = data[off:off + size]
    n = struct.unpack('<I', b[-4:])[0]
    end = len(b) - 4 - 4 * n
    i = 0; key = b''
    while i < end:
        sh, i = varint(b, i); ns, i = varint(b, i); vl, i = varint(b, i)
        key = key[:sh] + b[i:i + ns]; i += ns
        yield key, b[i:i + vl]; i += vl
data = open(INDEX, 'rb').read()
foot = data[-48:]
assert struct.unpack('<Q', foot[40:])[0] == 0xdb4775248b80fb57, 'not an SSTable'
i = 0
_, i = varint(foot, i); _, i = varint(foot, i); io, i = varint(foot, i); isz, i = varint(foot, i)
for _, h in block(data, io, isz):
    o, j = varint(h, 0); s, j = varint(h, j)
    for k, v in block(data, o, s):
        if k == b'':
            hd = tb.BundleHeaderProto(); hd.ParseFromString(v)
            print('header', hd.num_shards, hd.endianness, hd.version.producer)
        else:
            e = tb.BundleEntryProto(); e.ParseFromString(v)
            print(k.hex(), e.dtype, [d.size for d in e.shape.dim], e.shard_id, e.offset, e.size, e.crc32c, len(e.slices))
)PY";

/// graft's .proto files compiled for Python (as tests/graph/python_oracle.hpp does) into a folder of
/// this job's own, since the 2- and 3-rank jobs may run at once; "" (with a reason) when protoc or
/// python3-protobuf is absent.
std::string python_protos_here(std::string& why) {
    std::string out, protoc = GRAFT_PROTOC;
    if (protoc.empty() || protoc.find("NOTFOUND") != std::string::npos) {
        why = "protoc not found";
        return {};
    }
    if (graft::test::run_command("/usr/bin/python3 -c 'import google.protobuf'", out) != 0) {
        why = "/usr/bin/python3 with python3-protobuf is absent (apt-get install python3-protobuf)";
        return {};
    }
    auto d = fs::absolute(fs::path("scratch") / ("pyproto_np" + std::to_string(comm().size())));
    fs::create_directories(d);
    if (graft::test::run_command(protoc + " -I " GRAFT_PROTO_DIR " --python_out=" + d.string() + " " GRAFT_PROTO_DIR
                                 "/graft_tf/*.proto", out) != 0) {
        why = "protoc --python_out failed: " + out;
        return {};
    }
    return d.string();
}

/// The same lines from graft's reader.
std::string graft_index_dump(const std::string& prefix) {
    graft::tf::bundle_reader r(prefix);
    std::ostringstream o;
    o << "header " << r.header().num_shards << " " << r.header().endianness << " " << r.header().version.producer << "\n";
    for (auto& e : r.all_entries()) {
        static const char* digits = "0123456789abcdef";
        std::string hex;
        for (unsigned char c : e.name) hex += {digits[c >> 4], digits[c & 15]};
        o << hex << " " << static_cast<int>(e.type) << " [";
        for (int d = 0; d < e.shape.rank(); ++d) o << (d ? ", " : "") << e.shape.dim(d);
        o << "] " << e.shard_id << " " << e.offset << " " << e.size << " " << e.crc32c << " " << e.slices.size() << "\n";
    }
    return o.str();
}

}  // namespace graft_test_sharded

using namespace graft_test_sharded;

TEST_CASE("sharded save: N ranks write TF's layout, equal to a one-process Saver save tensor for tensor") {
    const int n = comm().size(), me = comm().rank();
    const std::string dir = case_dir("layout");
    const std::string prefix = dir + "/model.ckpt-1";
    model md(42);
    REQUIRE(md.vars.size() == 14);  // 2 kernels + 2 biases, Adam's m and v of each, 2 beta powers
    const auto want = md.values();

    const auto rep = gd::sharded_save(*md.s, md.vars, prefix);
    CHECK(rep.num_shards == n);
    CHECK(rep.rank == me);
    REQUIRE(rep.files.size() == static_cast<std::size_t>(n) + 1);
    CHECK(rep.files[0] == prefix + ".index");
    // The plan: every key once, every rank writes something (12 variables >= 3 ranks), greedy by bytes.
    REQUIRE(rep.plan.size() == md.vars.size());
    std::vector<std::uint64_t> load(static_cast<std::size_t>(n));
    for (auto& it : rep.plan) load[static_cast<std::size_t>(it.rank)] += it.bytes;
    for (int r = 0; r < n; ++r) CHECK(load[static_cast<std::size_t>(r)] > 0);
    CHECK(sum_over_ranks(static_cast<int>(rep.keys.size())) == static_cast<int>(md.vars.size()));
    comm().barrier();

    if (me == 0) {
        // Files: TF's names, N data files, nothing temporary left.
        std::set<std::string> names;
        for (auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
        std::set<std::string> expect{"model.ckpt-1.index", "checkpoint"};
        for (int k = 0; k < n; ++k) expect.insert(graft::tf::bundle_data_filename("model.ckpt-1", k, n));
        CHECK(names == expect);
        CHECK(graft::tf::bundle_data_filename("model.ckpt-1", n - 1, n) ==
              "model.ckpt-1.data-0000" + std::to_string(n - 1) + "-of-0000" + std::to_string(n));
        CHECK(graft::train::latest_checkpoint(dir) == prefix);

        // The index: num_shards N, each rank's keys in shard `rank`.
        graft::tf::bundle_reader br(prefix);
        CHECK(br.num_shards() == n);
        for (auto& it : rep.plan) CHECK(br.entry(it.key).shard_id == it.rank);
        for (int k = 0; k < n; ++k) {
            std::uint64_t end = 0;
            for (auto& e : br.all_entries())
                if (e.shard_id == k) end = std::max<std::uint64_t>(end, static_cast<std::uint64_t>(e.offset + e.size));
            CHECK(fs::file_size(br.data_path(k)) == end);
        }

        // The one-process reader against a one-process Saver save of the same values.
        const std::string ref_dir = dir + "/ref";
        graft::train::saver_options so;
        so.write_meta_graph = false;
        so.build_ops = false;
        graft::train::saver sv(md.m.mg, so);
        const std::string ref = sv.save(*md.s, ref_dir + "/model.ckpt", 1);
        graft::tf::checkpoint_reader a(prefix), b(ref);
        REQUIRE(a.keys() == b.keys());
        CHECK(a.keys().size() == md.vars.size());
        graft::tf::bundle_reader bref(ref);
        for (auto& k : a.keys()) {
            INFO(k);
            CHECK(same_bytes(a.read(k), b.read(k)));
            CHECK(same_bytes(a.read(k), want.at(k)));
            CHECK(br.entry(k).crc32c == bref.entry(k).crc32c);
            CHECK(br.entry(k).size == bref.entry(k).size);
        }

        // TF's merge step (MergeV2Checkpoints; graft::tf::merge_bundles follows it) over the same
        // parts, written one after another in this process, gives the same bytes: index and data.
        std::vector<std::string> parts;
        for (int k = 0; k < n; ++k) {
            parts.push_back(dir + "/tf/tmp/" + gd::sharded_filename("part", k, n));
            graft::tf::bundle_writer w(parts.back());
            for (auto& it : rep.plan)
                if (it.rank == k) w.add(it.key, want.at(it.key));
            w.finish();
        }
        graft::tf::merge_bundles(parts, dir + "/tf/model.ckpt-1");
        CHECK(graft::read_file(prefix + ".index") == graft::read_file(dir + "/tf/model.ckpt-1.index"));
        for (int k = 0; k < n; ++k) {
            CHECK(graft::read_file(graft::tf::bundle_data_filename(prefix, k, n)) ==
                  graft::read_file(graft::tf::bundle_data_filename(dir + "/tf/model.ckpt-1", k, n)));
        }

        // The index as python3-protobuf decodes it.
        std::string why;
        if (const std::string py = python_protos_here(why); !py.empty()) {
            const std::string script = py + "/index_dump.py";
            graft::write_file_atomic(script, "import sys\nsys.path.insert(0, '" + py + "')\nINDEX = '" + prefix +
                                                 ".index'\n" + python_index_dump);
            std::string out;
            const int rc = graft::test::run_command("/usr/bin/python3 " + script, out);
            INFO(out);
            CHECK(rc == 0);
            CHECK(out == graft_index_dump(prefix));
            CHECK(out.rfind("header " + std::to_string(n) + " 0 1\n", 0) == 0);
        } else {
            MESSAGE("SKIP: ", why, ": the index is checked by graft's reader only");
        }
    }

    // Restore into a fresh model (other initial values) on every rank: all variables...
    model fresh(7);
    CHECK_FALSE(same_bytes(fresh.values().at(md.m.vars[0]), want.at(md.m.vars[0])));
    auto rr = gd::sharded_restore(*fresh.s, fresh.vars, dir);  // the folder: its latest checkpoint
    CHECK(rr.prefix == prefix);
    CHECK(rr.num_shards == n);
    CHECK(rr.restored.size() == md.vars.size());
    std::uint64_t total = 0;
    for (auto& [k, t] : want) total += t.nbytes();
    CHECK(rr.bytes_read == total);
    CHECK(static_cast<int>(rr.shards_read.size()) == n);
    for (auto& [k_b, t] : fresh.values()) {
        auto& k = k_b;  // clang 14: lambdas cannot capture structured bindings
        INFO(k);
        CHECK(same_bytes(t, want.at(k)));
    }
    // ... or only what a rank asks for: the second layer's kernel, read from its shard alone.
    model part(9);
    std::vector<graft::variable_info> one;
    for (auto& v : part.vars)
        if (v.checkpoint_key == "dense_1/kernel") one.push_back(v);
    REQUIRE(one.size() == 1);
    auto pr = gd::sharded_restore(*part.s, one, prefix);
    CHECK(pr.restored == std::vector<std::string>{"dense_1/kernel"});
    CHECK(pr.bytes_read == 64u * 10u * 4u);
    CHECK(pr.shards_read.size() == 1);
    for (auto& it : rep.plan)
        if (it.key == "dense_1/kernel") CHECK(*pr.shards_read.begin() == it.rank);
    CHECK(same_bytes(part.s->variable_value("dense_1/kernel"), want.at("dense_1/kernel")));
    CHECK_FALSE(same_bytes(part.s->variable_value("dense/kernel"), want.at("dense/kernel")));
}

TEST_CASE("sharded save: a partitioned variable whose partitions different ranks write") {
    const int n = comm().size(), me = comm().rank();
    const std::string dir = case_dir("partitioned");
    // emb [5, 4] as two partition variables (rows 0-2 and 3-4), as tf.fixed_size_partitioner makes them.
    auto make = [](bool zeros) {
        auto g = std::make_unique<graft::meta_graph>();
        graft::graph_builder b(g->graph);
        graft::graph_builder e = b.sub("emb");
        std::vector<float> v(20);
        for (int i = 0; i < 20; ++i) v[static_cast<std::size_t>(i)] = zeros ? 0.0f : 0.5f * static_cast<float>(i) - 3.0f;
        tensor full = tensor::from_vector<float>({5, 4}, v);
        graft::train::create_variable(*g, e, "part_0", full.slice(0, 3).clone());
        graft::train::create_variable(*g, e, "part_1", full.slice(3, 2).clone());
        graft::train::create_variable(*g, b, "w", tensor::from_vector<float>({2}, {zeros ? 0.0f : 1.0f, 2.0f}));
        return std::pair{std::move(g), full};
    };
    auto partitioned = [](std::vector<graft::variable_info> vars) {
        for (auto& v : vars) {
            if (v.node != "emb/part_0" && v.node != "emb/part_1") continue;
            const bool first = v.node == "emb/part_0";
            v.checkpoint_key = "emb";
            v.save_slice = graft::save_slice_info{"emb", {5, 4}, {first ? 0 : 3, 0}, {first ? 3 : 2, 4}};
        }
        return vars;
    };
    auto [g, full] = make(false);
    const std::string init = graft::train::global_variables_initializer(*g);
    graft::exec::session s(g->graph);
    s.run({}, {}, {init});
    const auto vars = partitioned(graft::find_variables(*g));
    const std::string prefix = dir + "/p";
    auto rep = gd::sharded_save(s, vars, prefix, nullptr, {.assignment = gd::shard_assignment::round_robin});
    REQUIRE(rep.plan.size() == 3);
    CHECK(rep.plan[0].key == "emb");
    CHECK(rep.plan[1].key == "emb");
    CHECK(rep.plan[0].rank == 0);
    CHECK(rep.plan[1].rank == 1 % n);
    if (me == 0) {
        graft::tf::checkpoint_reader r(prefix);
        CHECK(r.keys() == std::vector<std::string>{"emb", "w"});
        CHECK(same_bytes(r.read("emb"), full));
        graft::tf::bundle_reader br(prefix);
        REQUIRE(br.entry("emb").slices.size() == 2);
        std::set<int> shards;
        for (auto& sl : br.entry("emb").slices) shards.insert(br.entry(graft::tf::encode_slice_key("emb", sl)).shard_id);
        CHECK(shards == std::set<int>{0, 1 % n});
        // A slice across both partitions, assembled from both shards.
        tensor mid = br.read_slice("emb", graft::tf::tensor_slice({{2, 2}, {0, -1}}));
        CHECK(same_bytes(mid, full.slice(2, 2).clone()));
    }
    // Restore into zeros: each partition gets its rows.
    auto [g2, unused] = make(true);
    const std::string init2 = graft::train::global_variables_initializer(*g2);
    graft::exec::session s2(g2->graph);
    s2.run({}, {}, {init2});
    auto rr = gd::sharded_restore(s2, partitioned(graft::find_variables(*g2)), prefix);
    CHECK(rr.restored.size() == 3);
    CHECK(same_bytes(s2.variable_value("emb/part_0"), full.slice(0, 3).clone()));
    CHECK(same_bytes(s2.variable_value("emb/part_1"), full.slice(3, 2).clone()));
    CHECK(s2.variable_value("w").data<float>()[0] == 1.0f);
    CHECK(rr.bytes_read == 20u * 4u + 2u * 4u);
}

TEST_CASE("sharded save: round-robin assignment, and a one-process (local) sharded save") {
    const int n = comm().size(), me = comm().rank();
    const std::string dir = case_dir("round_robin");
    model md(3);
    const auto rep = gd::sharded_save(*md.s, md.vars, dir + "/rr", nullptr, {.assignment = gd::shard_assignment::round_robin});
    for (std::size_t i = 0; i < rep.plan.size(); ++i) CHECK(rep.plan[i].rank == static_cast<int>(i) % n);
    if (me == 0) {
        CHECK(holds(dir + "/rr", md.values()));
        gd::local_communicator lc;
        auto one = gd::sharded_save(*md.s, md.vars, dir + "/one", &lc);
        CHECK(one.num_shards == 1);
        CHECK(fs::exists(dir + "/one.data-00000-of-00001"));
        CHECK(holds(dir + "/one", md.values()));
        CHECK(leftovers(dir).empty());
    }
    comm().barrier();
}

TEST_CASE("sharded save over an existing checkpoint replaces it; a failing rank leaves the previous one whole") {
    const int n = comm().size(), me = comm().rank();
    const std::string dir = case_dir("replace");
    const std::string prefix = dir + "/model.ckpt";
    model md(11);

    // A one-shard checkpoint at the prefix (rank 0 alone), then the N-shard save over it.
    if (me == 0) {
        gd::local_communicator lc;
        gd::sharded_save(*md.s, md.vars, prefix, &lc);
    }
    comm().barrier();
    md.step(32);
    auto v1 = md.values();
    gd::sharded_save(*md.s, md.vars, prefix);
    if (me == 0) {
        CHECK(holds(prefix, v1));
        CHECK(fs::exists(prefix + ".data-00000-of-00001") == (n == 1));
        CHECK(leftovers(dir).empty());
    }
    md.step(0);
    auto v2 = md.values();
    gd::sharded_save(*md.s, md.vars, prefix);
    if (me == 0) CHECK(holds(prefix, v2));

    // Rank 1 cannot write its shard (the disk is full): every rank raises an error naming rank 1.
    if (n >= 2) {
        md.step(32);
        std::optional<graft::test::fault_injector> f;
        if (me == 1) f.emplace(1);
        std::string msg;
        try {
            gd::sharded_save(*md.s, md.vars, prefix);
        } catch (const gd::dist_error& e) {
            msg = e.what();
        }
        f.reset();
        INFO(msg);
        CHECK(msg.find("rank 1: ") != std::string::npos);
        CHECK(msg.find("No space left") != std::string::npos);
        CHECK(msg.find(prefix) != std::string::npos);
        if (me == 0) {
            CHECK(holds(prefix, v2));
            CHECK(leftovers(dir).empty());
        }
        comm().barrier();
    }

    // Rank 0's own write, merge and commit failing at each of its file operations in turn: every
    // rank sees the same outcome, and the checkpoint is the old one or the new one, whole.
    auto old = v2;
    long calls = 0;
    {
        std::optional<graft::test::fault_injector> count;
        if (me == 0) count.emplace(-1);
        md.step(0);
        old = md.values();
        gd::sharded_save(*md.s, md.vars, prefix);
        if (me == 0) calls = count->calls();
    }
    auto t = tensor::from_vector<std::int64_t>({1}, {calls});
    comm().broadcast(t, 0, "calls");
    calls = t.data<std::int64_t>()[0];
    CHECK(calls > 10);
    int failed = 0, replaced = 0;
    for (long at = 1; at <= calls; ++at) {
        md.step(at % 2 ? 32 : 0);
        auto now = md.values();
        std::optional<graft::test::fault_injector> f;
        if (me == 0) f.emplace(at);
        std::string msg;
        try {
            gd::sharded_save(*md.s, md.vars, prefix);
        } catch (const gd::dist_error& e) {
            msg = e.what();
        }
        const bool fired = me == 0 && f->fired();
        f.reset();
        const int threw = msg.empty() ? 0 : 1;
        CHECK(sum_over_ranks(threw) == threw * n);  // all or none
        if (threw) CHECK(msg.find("rank 0: ") != std::string::npos);
        if (me == 0) {
            INFO("failing file operation ", at, ": ", msg);
            CHECK(fired);
            const bool is_new = holds(prefix, now), is_old = holds(prefix, old);
            CHECK((is_new || is_old));
            if (threw && is_old) ++failed;
            if (is_new) {
                ++replaced;
                old = now;
            }
            CHECK(leftovers(dir).empty());
        }
        comm().barrier();
    }
    if (me == 0) {
        MESSAGE(calls, " file operations of rank 0 failed in turn: ", failed, " saves left the old checkpoint, ",
                replaced, " the new one");
        CHECK(failed > 0);
    }
}

TEST_CASE("sharded restore: a rank that cannot read its variables is an error on every rank, nothing assigned") {
    const int n = comm().size(), me = comm().rank();
    const std::string dir = case_dir("restore_error");
    model md(5);
    gd::sharded_save(*md.s, md.vars, dir + "/m");
    model fresh(6);
    const auto before = fresh.values();
    auto vars = fresh.vars;
    if (me == n - 1) vars[0].checkpoint_key = "no/such/key";
    std::string msg;
    try {
        gd::sharded_restore(*fresh.s, vars, dir + "/m");
    } catch (const gd::dist_error& e) {
        msg = e.what();
    }
    INFO(msg);
    CHECK(msg.find("rank " + std::to_string(n - 1) + ": ") != std::string::npos);
    CHECK(msg.find("lacks variables") != std::string::npos);
    for (auto& [k, t] : fresh.values()) CHECK(same_bytes(t, before.at(k)));
    // Non-strict: the others restore, the missing one is reported.
    auto rr = gd::sharded_restore(*fresh.s, vars, dir + "/m", nullptr, false);
    CHECK(rr.missing.size() == (me == n - 1 ? 1u : 0u));
}

TEST_CASE("sharded save: a rank dying mid-save (driven by test_dist with GRAFT_TEST_SHARD_KILL_DIR)") {
    const char* dir = std::getenv("GRAFT_TEST_SHARD_KILL_DIR");
    if (!dir) return;  // only when test_dist's launcher asks for it
    const int victim = std::atoi(std::getenv("GRAFT_TEST_SHARD_KILL_RANK") ? std::getenv("GRAFT_TEST_SHARD_KILL_RANK") : "1");
    const long at = std::atol(std::getenv("GRAFT_TEST_SHARD_KILL_AT") ? std::getenv("GRAFT_TEST_SHARD_KILL_AT") : "1");
    model md(21);
    const std::string prefix = std::string(dir) + "/model.ckpt";
    gd::sharded_save(*md.s, md.vars, prefix);
    // The checkpoint that must survive: a save over the first one, counting the victim's file
    // operations (a negative GRAFT_TEST_SHARD_KILL_AT counts from the end of them); rank 0 keeps a copy.
    md.step(32);
    long calls = 0;
    {
        std::optional<graft::test::fault_injector> count;
        if (comm().rank() == victim) count.emplace(-1);
        gd::sharded_save(*md.s, md.vars, prefix);
        if (count) calls = count->calls();
    }
    if (comm().rank() == 0) {
        fs::create_directories(std::string(dir) + "/expected");
        for (auto& e : fs::directory_iterator(dir)) {
            auto name = e.path().filename().string();
            if (name.rfind("model.ckpt.", 0) == 0) fs::copy_file(e.path(), std::string(dir) + "/expected/" + name);
        }
    }
    comm().barrier();
    md.step(0);
    std::optional<graft::test::fault_injector> f;
    if (comm().rank() == victim) {
        const long when = at > 0 ? at : calls + at;
        std::fprintf(stderr, "rank %d: dying at my file operation %ld of %ld of the third save\n", victim, when, calls);
        f.emplace(when, graft::test::fault::exit);
    }
    gd::sharded_save(*md.s, md.vars, prefix);
    f.reset();
    std::fprintf(stderr, "rank %d: the last save finished (the victim's operation was not reached)\n", comm().rank());
}
