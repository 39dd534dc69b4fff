#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>

namespace {

/// Prints each test case as it starts and how long it took, to stderr: when ctest's TIMEOUT stops a run that hung,
/// its output names the test case that hung.
struct Progress : doctest::IReporter {
  explicit Progress(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& tc) override {
    start_ = std::chrono::steady_clock::now();
    std::fprintf(stderr, "[e2e] start: %s\n", tc.m_name);
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "[e2e] done in %.1f s\n", s);
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  std::chrono::steady_clock::time_point start_;
};

REGISTER_LISTENER("progress", 1, Progress);

}  // namespace
