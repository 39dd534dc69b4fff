// change::Runner on a toy change kind over an in-memory store: each step fails in turn, and what the runner does
// (undo in reverse, read back, stop on a lost lock, tell the fence nothing is left to recover) is checked against the
// store, not against a script.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "change/runner.h"
#include "cmd/lock.h"
#include "kube/client.h"

namespace change = mindie::change;
namespace cmd = mindie::cmd;

namespace {

/// A fence that records what the runner asked of it; `lost_at_write` > 0 loses the lock at that write.
struct ToyFence : change::Fence {
  int writes = 0;
  int lost_at_write = 0;
  int unreachable_at_write = 0;  ///< > 0: the lease cannot be renewed at that write (no answer)
  bool lock_lost_on_confirm = false;
  int confirms = 0;
  int undos = 0;
  bool consistent = false;  ///< nothing_to_recover() was called
  bool bounded = false;
  void before_write() override {
    if (++writes == lost_at_write) throw cmd::LockLost("lost the namespace lock: taken by scale by eve@h9, pid 99");
    if (writes == unreachable_at_write) throw mindie::kube::TransportError("lease: connection reset");
  }
  void before_undo() override { ++undos; }
  void confirm_held() override {
    ++confirms;
    if (lock_lost_on_confirm) throw cmd::LockLost("lost the namespace lock: taken by deploy by eve@h9, pid 98");
  }
  void nothing_to_recover() override { consistent = true; }
  void bound_remaining() override { bounded = true; }
  void lift_bound() override { bounded = false; }
};

/// How the toy's write of step `k` fails.
enum class Failure {
  None,
  Refused,
  Conflict,
  NoAnswerApplied,
  NoAnswerNotApplied,
  NoAnswerUnreadable,
  ConflictOwnUnreadable,  ///< stored, its reply lost; the retry meets 409; the read-back fails
};

mindie::kube::ApiError api_error(int code, const std::string& reason) {
  return mindie::kube::ApiError(code, reason, "injected", {}, "PATCH", "/toy");
}

/// The toy change: sets keys a, b, c of `store` to 1 (from 0), one step each; the step `fail_at` fails as `how`.
std::vector<change::Step> toy_steps(std::map<std::string, int>& store, int fail_at, Failure how) {
  std::vector<change::Step> steps;
  int k = 0;
  for (const std::string key : {"a", "b", "c"}) {
    const bool fails = ++k == fail_at;
    change::Step s;
    s.name = "toy/" + key;
    s.verb = "set";
    s.write = [&store, key, fails, how] {
      if (!fails || how == Failure::None) {
        store[key] = 1;
        return;
      }
      switch (how) {
        case Failure::Refused: throw api_error(403, "Forbidden");
        case Failure::Conflict: throw api_error(409, "Conflict");
        case Failure::NoAnswerApplied: store[key] = 1; throw mindie::kube::TransportError("connection reset");
        case Failure::ConflictOwnUnreadable: store[key] = 1; throw api_error(409, "Conflict");
        default: throw mindie::kube::TransportError("connection reset");
      }
    };
    s.applied = [&store, key, fails, how]() -> bool {
      if (fails && (how == Failure::NoAnswerUnreadable || how == Failure::ConflictOwnUnreadable))
        throw mindie::kube::TransportError("still unreachable");
      return store[key] == 1;
    };
    s.undo = [&store, key] { store[key] = 0; };
    steps.push_back(std::move(s));
  }
  return steps;
}

std::map<std::string, int> fresh() { return {{"a", 0}, {"b", 0}, {"c", 0}}; }

}  // namespace

TEST_CASE("runner: a toy change killed at each step is undone in reverse, or goes on when read back as applied") {
  for (int k = 1; k <= 3; ++k) {
    for (Failure how : {Failure::Refused, Failure::NoAnswerNotApplied, Failure::NoAnswerUnreadable}) {
      CAPTURE(k);
      CAPTURE(static_cast<int>(how));
      auto store = fresh();
      ToyFence fence;
      change::Runner runner(fence, {"toy", {}, "re-run the toy", false});
      if (k == 1) {
        // Nothing written before the failure (unreadable: maybe written, so undone): the store is as found.
        try {
          runner.run(toy_steps(store, k, how));
          FAIL("run() did not throw");
        } catch (const std::exception&) {
        }
      } else {
        CHECK_THROWS_WITH_AS(runner.run(toy_steps(store, k, how)), doctest::Contains("so the toy was undone"),
                             cmd::PartialFailure);
      }
      CHECK(store == fresh());
      CHECK(fence.consistent);
      // Bounded while something written is undone; lifted when nothing was (k == 1 and known not applied).
      CHECK(fence.bounded == !(k == 1 && how != Failure::NoAnswerUnreadable));
    }
  }
  // A write whose answer was lost but that was applied counts as written: the change goes on to the end.
  auto store = fresh();
  ToyFence fence;
  change::Runner runner(fence, {"toy", {}, "", false});
  runner.run(toy_steps(store, 2, Failure::NoAnswerApplied));
  CHECK(store == std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 1}});
  CHECK_FALSE(fence.bounded);  // the failure's bound lifted: it was no failure after all
  CHECK(runner.written() == std::vector<std::string>{"toy/a set", "toy/b set", "toy/c set"});
}

TEST_CASE("runner: a lost lock stops the change where it is: nothing more written, not even an undo") {
  auto store = fresh();
  ToyFence fence;
  fence.lost_at_write = 3;
  change::Runner runner(fence, {"toy", {}, "", false});
  CHECK_THROWS_WITH_AS(runner.run(toy_steps(store, 0, Failure::None)),
                       doctest::Contains("it writes nothing more, not even an undo"), cmd::PartialFailure);
  CHECK(store == std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 0}});
  CHECK(fence.undos == 0);
  CHECK_FALSE(fence.consistent);

  // A 409 is answered by confirming the lock: lost, the change stops the same way.
  auto store2 = fresh();
  ToyFence fence2;
  fence2.lock_lost_on_confirm = true;
  change::Runner runner2(fence2, {"toy", {}, "", false});
  CHECK_THROWS_AS(runner2.run(toy_steps(store2, 2, Failure::Conflict)), cmd::PartialFailure);
  CHECK(fence2.confirms == 1);
  CHECK(store2 == std::map<std::string, int>{{"a", 1}, {"b", 0}, {"c", 0}});
  CHECK(fence2.undos == 0);

  // Held: the conflict is someone else's edit; read back as not applied, the written step is undone.
  auto store3 = fresh();
  ToyFence fence3;
  change::Runner runner3(fence3, {"toy", {}, "", false});
  CHECK_THROWS_AS(runner3.run(toy_steps(store3, 2, Failure::Conflict)), cmd::PartialFailure);
  CHECK(fence3.confirms == 1);
  CHECK(store3 == fresh());
  CHECK(fence3.consistent);
}

TEST_CASE("runner: a server dry run's failure says nothing changed; a step without undo leaves the recovery") {
  auto store = fresh();
  ToyFence fence;
  change::Runner dry(fence, {"toy", {}, "", true});
  CHECK_THROWS_WITH_AS(dry.run(toy_steps(store, 2, Failure::Refused)), "(server dry run: no changes were made)",
                       cmd::PartialFailure);
  CHECK(fence.undos == 0);

  auto store2 = fresh();
  ToyFence fence2;
  auto steps = toy_steps(store2, 3, Failure::Refused);
  steps[1].undo = nullptr;  // like a delete
  change::Runner runner(fence2, {"toy", {}, "the next command finishes it", false});
  CHECK_THROWS_WITH_AS(runner.run(steps),
                       "toy stopped at toy/c after writing:\n  toy/a set\n  toy/b set\nthe next command finishes it",
                       cmd::PartialFailure);
  CHECK(store2 == std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 0}});
  CHECK_FALSE(fence2.consistent);
}

TEST_CASE("runner: a 409 whose read-back fails may be the write's own stored try: it is undone with the rest") {
  auto store = fresh();
  ToyFence fence;
  change::Runner runner(fence, {"toy", {}, "", false});
  CHECK_THROWS_WITH_AS(runner.run(toy_steps(store, 2, Failure::ConflictOwnUnreadable)),
                       doctest::Contains("toy/b set\n  toy/a set"), cmd::PartialFailure);
  CHECK(store == fresh());  // b, stored by its first try, reverted too
}

TEST_CASE("runner: a lease that cannot be renewed before a write: that write was never sent, never undone") {
  auto store = fresh();
  ToyFence fence;
  fence.unreachable_at_write = 2;
  change::Runner runner(fence, {"toy", {}, "", false});
  auto steps = toy_steps(store, 0, Failure::None);
  steps[1].applied = []() -> bool { throw mindie::kube::TransportError("unreachable"); };
  steps[1].undo = [] { FAIL("the undo of a write never sent"); };
  try {
    runner.run(steps);
    FAIL("run() did not throw");
  } catch (const cmd::PartialFailure& e) {
    CHECK(std::string(e.what()).find("toy/b set") == std::string::npos);  // neither written nor reverted
    CHECK(std::string(e.what()).find("reverted):\n  toy/a set\nnothing changed") != std::string::npos);
  }
  CHECK(store == fresh());
}

namespace {

/// A toy change kind: its intent names the keys it sets to a value; plan() is all it declares (no recovery code).
struct ToyIntent {
  std::vector<std::string> keys;
  int value = 0;
  int was = 0;  ///< what the keys held when the change was planned
};

std::vector<change::Step> plan_toy(std::map<std::string, int>& store, const ToyIntent& intent) {
  std::vector<change::Step> steps;
  for (const auto& key : intent.keys) {
    change::Step s;
    s.name = "toy/" + key;
    s.verb = "set";
    s.write = [&store, key, v = intent.value] { store[key] = v; };
    s.applied = [&store, key, v = intent.value] { return store[key] == v; };
    s.undo = [&store, key, was = intent.was] { store[key] = was; };
    steps.push_back(std::move(s));
  }
  return steps;
}

}  // namespace

TEST_CASE("runner: a toy change killed after each step is recovered from its intent by its plan alone") {
  const ToyIntent intent{{"a", "b", "c"}, 7, 0};
  for (std::size_t killed_after = 0; killed_after <= 3; ++killed_after) {
    for (change::Direction direction : {change::Direction::Finish, change::Direction::Revert}) {
      CAPTURE(killed_after);
      auto store = fresh();
      // The first command records the intent (the toy's "lease" is `intent` itself) and dies after k writes.
      {
        ToyFence fence;
        change::Runner first(fence, {"toy", {}, "", false});
        auto steps = plan_toy(store, intent);
        steps.resize(killed_after);
        first.run(steps);
      }
      // The next command plans again from the intent and recovers with the generic runner.
      ToyFence fence;
      change::Runner next(fence, {"toy", {}, "", false});
      const change::Recovered r = next.recover(plan_toy(store, intent), direction);
      if (killed_after == 0) {
        CHECK(r == change::Recovered::NothingApplied);
        CHECK(store == fresh());
      } else if (direction == change::Direction::Revert) {
        CHECK(r == change::Recovered::Reverted);
        CHECK(store == fresh());
        CHECK(fence.undos == static_cast<int>(killed_after));
      } else {
        CHECK(r == (killed_after == 3 ? change::Recovered::AlreadyComplete : change::Recovered::Finished));
        CHECK(store == std::map<std::string, int>{{"a", 7}, {"b", 7}, {"c", 7}});
        CHECK(fence.writes == static_cast<int>(3 - killed_after));  // only what was left is written
      }
    }
  }
}
