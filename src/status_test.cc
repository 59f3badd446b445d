#include "dpem/status.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace dpem {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd: " + std::to_string(x));
  return x / 2;
}

Status Quarter(int x, int* out) {
  DPEM_ASSIGN_OR_RETURN(int h, Half(x));
  DPEM_ASSIGN_OR_RETURN(*out, Half(h));
  return OkStatus();
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(OkStatus().ok());
  EXPECT_EQ(OkStatus().ToString(), "OK");
  const Status s = InvalidArgumentError("epsilon must be > 0");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "invalid argument: epsilon must be > 0");
  EXPECT_EQ(IoError("x").code(), StatusCode::kIoError);
  EXPECT_EQ(NumericalError("x").code(), StatusCode::kNumericalError);
}

TEST(StatusTest, StatusOrHoldsValueOrError) {
  StatusOr<int> v = Half(8);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 4);
  StatusOr<int> e = Half(3);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "odd: 3");
}

TEST(StatusTest, MacrosPropagate) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  const Status s = Quarter(6, &out);  // 6 -> 3 -> odd.
  EXPECT_EQ(s.message(), "odd: 3");
}

TEST(StatusTest, StatusOrMovesOnlyTypes) {
  StatusOr<std::unique_ptr<int>> p = std::make_unique<int>(7);
  ASSERT_TRUE(p.ok());
  std::unique_ptr<int> q = std::move(p).value();
  EXPECT_EQ(*q, 7);
}

}  // namespace
}  // namespace dpem
