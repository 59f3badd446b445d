// The strict JSON field readers of model files (internal/json_fields.h).
#include "internal/json_fields.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dpem::internal {
namespace {

using nlohmann::json;

TEST(JsonFieldsTest, ParsesOnlyJson) {
  EXPECT_TRUE(ParseJson("{\"a\": [1, 2]}").ok());
  EXPECT_EQ(ParseJson("{\"a\": ").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseJson("").status().code(), StatusCode::kInvalidArgument);
}

// A file that is not JSON gets where and why; NaN, infinities and numbers
// beyond a double, which hand-edited files hold, are named as such.
TEST(JsonFieldsTest, SaysWhereAndWhyTextIsNotJson) {
  const std::string nan_file = "{\n  \"a\": 1,\n  \"tolerance\": NaN\n}";
  const Status nan = ParseJson(nan_file).status();
  EXPECT_EQ(nan.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(nan.message().find("not valid JSON"), std::string::npos) << nan.message();
  EXPECT_NE(nan.message().find("line 3"), std::string::npos) << nan.message();
  EXPECT_NE(nan.message().find("no NaN or infinity"), std::string::npos) << nan.message();
  for (const char* text : {"{\"x\": Infinity}", "{\"x\": -Infinity}", "{\"x\": nan}",
                           "{\"x\": -inf}", "[inf]"}) {
    const Status s = ParseJson(text).status();
    EXPECT_NE(s.message().find("no NaN or infinity"), std::string::npos)
        << text << ": " << s.message();
  }
  const Status overflow = ParseJson("{\"x\": 1e999}").status();
  EXPECT_NE(overflow.message().find("beyond the range of a double"), std::string::npos)
      << overflow.message();
  // Other damage gets the parser's reason without the hint.
  const Status truncated = ParseJson("{\"a\": [1, 2").status();
  EXPECT_NE(truncated.message().find("line 1"), std::string::npos) << truncated.message();
  EXPECT_EQ(truncated.message().find("NaN"), std::string::npos) << truncated.message();
}

// Each way a quantity can be bad is named with the field.
TEST(JsonFieldsTest, FiniteNumberFieldsSayWhichFieldIsBadAndWhy) {
  json j = json::parse(R"({"t": 0.25, "zero": 0, "neg": -1, "null": null, "s": "0.5"})");
  EXPECT_EQ(FiniteNumberField(j, "t").value(), 0.25);
  EXPECT_EQ(FiniteNumberField(j, "zero", kNonNegativeNumber).value(), 0.0);
  EXPECT_EQ(FiniteNumberField(j, "neg").value(), -1.0);  // Any finite number.
  struct Case {
    const char* key;
    NumberRange range;
    const char* where;
    const char* message;
  };
  j["nan"] = std::nan("");  // Built in C++: JSON text cannot hold them.
  j["inf"] = std::numeric_limits<double>::infinity();
  const Case cases[] = {
      {"zero", kPositiveNumber, "", "field 'zero' must be > 0, got 0"},
      {"neg", kNonNegativeNumber, "privacy", "field 'privacy.neg' must be >= 0, got -1"},
      {"t", NumberRange{0.0, 0.2, true, true}, "", "field 't' must be > 0 and < 0.2, got 0.25"},
      {"null", {}, "", "field 'null' is null, not a number (a NaN or an infinity"},
      {"s", {}, "", "field 's' must be a number, not string"},
      {"nan", {}, "", "field 'nan' is NaN, not a finite number"},
      {"inf", {}, "", "field 'inf' is inf, not a finite number"},
      {"missing", {}, "privacy", "missing field 'privacy.missing'"},
  };
  for (const Case& c : cases) {
    const Status s = FiniteNumberField(j, c.key, c.range, c.where).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.key;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.key << ": " << s.message();
  }
  // Arrays: the first bad entry, counted from 1.
  EXPECT_EQ(FiniteNumbersFrom(json::parse("[0.5, 2]"), "w", kPositiveNumber).value(),
            (std::vector<double>{0.5, 2.0}));
  EXPECT_TRUE(FiniteNumbersFrom(json::array(), "w", kPositiveNumber).value().empty());
  EXPECT_EQ(FiniteNumbersFrom(json::parse("[1, null]"), "w").status().message().substr(0, 22),
            "w entry 2 is null, not");
  EXPECT_EQ(FiniteNumbersFrom(json::parse("[1, 2, -3]"), "w", kPositiveNumber).status().message(),
            "w entry 3 must be > 0, got -3");
  EXPECT_FALSE(FiniteNumbersFrom(json::parse("{}"), "w").ok());
  // The vectors of parameters name a null entry too.
  EXPECT_NE(VectorFrom(json::parse("[1, null]"), "'mean'").status().message().find(
                "'mean' entry 2 is null"),
            std::string::npos);
}

TEST(JsonFieldsTest, ReadsFieldsOfTheirTypeOnly) {
  const json j = json::parse(R"({"x": 1.5, "s": "t", "b": true, "n": 3})");
  EXPECT_EQ(NumberField(j, "x").value(), 1.5);
  EXPECT_EQ(NumberField(j, "n").value(), 3.0);
  EXPECT_EQ(StringField(j, "s").value(), "t");
  EXPECT_TRUE(BoolField(j, "b").value());
  EXPECT_FALSE(NumberField(j, "s").ok());
  EXPECT_FALSE(NumberField(j, "b").ok());
  EXPECT_FALSE(StringField(j, "x").ok());
  EXPECT_FALSE(BoolField(j, "n").ok());
  EXPECT_NE(Field(j, "y").status().message().find("missing field 'y'"), std::string::npos);
  EXPECT_FALSE(Field(json::array(), "x").ok());
  EXPECT_EQ(OptionalStringField(j, "y").value(), std::nullopt);
  EXPECT_EQ(OptionalStringField(j, "s").value(), std::optional<std::string>("t"));
  EXPECT_FALSE(OptionalStringField(j, "x").ok());
  const json flags = json::parse(R"({"on": true, "off": false, "text": "true", "one": 1})");
  EXPECT_TRUE(BoolFieldOr(flags, "on", false).value());
  EXPECT_FALSE(BoolFieldOr(flags, "off", true).value());
  EXPECT_TRUE(BoolFieldOr(flags, "missing", true).value());
  EXPECT_FALSE(BoolFieldOr(flags, "missing", false).value());
  EXPECT_FALSE(BoolFieldOr(flags, "text", false).ok());
  EXPECT_FALSE(BoolFieldOr(flags, "one", false).ok());
}

TEST(JsonFieldsTest, CountsAreJsonIntegersInRange) {
  const json j = json::parse(R"({"one": 1, "ten": 10, "zero": 0, "minus": -3, "float": 4.0,
                                 "frac": 2.5, "exp": 1e2, "text": "5", "flag": true,
                                 "big": 18446744073709551615})");
  EXPECT_EQ(CountField(j, "one", 10).value(), 1);
  EXPECT_EQ(CountField(j, "ten", 10).value(), 10);
  EXPECT_FALSE(CountField(j, "ten", 9).ok());
  for (const char* key : {"zero", "minus", "float", "frac", "exp", "text", "flag", "big"}) {
    EXPECT_FALSE(CountField(j, key, std::int64_t{1} << 53).ok()) << key;
  }
  // An integer built in C++ from a signed type is signed in nlohmann.
  const json built = {{"signed", 5}};
  EXPECT_EQ(CountField(built, "signed", 10).value(), 5);
  EXPECT_EQ(AsUnsigned(json::parse("0")), std::optional<std::uint64_t>(0));
  EXPECT_EQ(AsUnsigned(json::parse("-0")), std::nullopt);
  EXPECT_EQ(AsUnsigned(json(-1)), std::nullopt);
  EXPECT_EQ(AsUnsigned(json(1.0)), std::nullopt);
}

TEST(JsonFieldsTest, ReadsVectorsAndMatricesOfTheirShapeOnly) {
  EXPECT_EQ(VectorFrom(json::parse("[1, 2.5]"), "v").value(), Eigen::Vector2d(1.0, 2.5));
  EXPECT_EQ(VectorFrom(json::array(), "v").value().size(), 0);
  EXPECT_FALSE(VectorFrom(json::parse("[1, \"2\"]"), "v").ok());
  EXPECT_FALSE(VectorFrom(json::parse("{}"), "v").ok());
  const json rows = json::parse("[[1, 2, 3], [4, 5, 6]]");
  Eigen::MatrixXd m(2, 3);
  m << 1, 2, 3, 4, 5, 6;
  EXPECT_EQ(MatrixFrom(rows, 2, 3, "m").value(), m);
  EXPECT_EQ(RowsFrom(rows, "m").value(), m);
  EXPECT_FALSE(MatrixFrom(rows, 3, 2, "m").ok());
  const Status ragged = RowsFrom(json::parse("[[1, 2], [3]]"), "'m'").status();
  EXPECT_NE(ragged.message().find("'m' must be a 2 x 2 array"), std::string::npos)
      << ragged.message();
  EXPECT_FALSE(RowsFrom(json::array(), "m").ok());
  EXPECT_FALSE(RowsFrom(json::parse("[1, 2]"), "m").ok());
  EXPECT_EQ(RowsFrom(json::parse("[[], []]"), "m").value().cols(), 0);
  // A claimed size the document does not hold is refused before allocating.
  EXPECT_FALSE(MatrixFrom(rows, 2, Eigen::Index{1} << 40, "m").ok());
}

TEST(JsonFieldsTest, ReadsStrings) {
  EXPECT_EQ(StringsFrom(json::parse(R"(["a", "b"])"), "s").value(),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(StringsFrom(json::parse(R"(["a", 1])"), "s").ok());
  EXPECT_FALSE(StringsFrom(json::parse(R"("a")"), "s").ok());
}

TEST(JsonFieldsTest, WritesRowsAsArraysOfNumbers) {
  Eigen::MatrixXd m(2, 2);
  m << 1.5, -2, 0, 3;
  EXPECT_EQ(RowsToJson(m).dump(), "[[1.5,-2.0],[0.0,3.0]]");
  EXPECT_EQ(RowsToJson(Eigen::MatrixXd(0, 3)).dump(), "[]");
  EXPECT_EQ(json(AsStdVector(Eigen::Vector2d(0.25, 4))).dump(), "[0.25,4.0]");
}

}  // namespace
}  // namespace dpem::internal
