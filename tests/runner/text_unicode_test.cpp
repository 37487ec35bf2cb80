// The Unicode facts behind CLIP's text handling: letter/number classes, lower-casing and NFC.
#include <gtest/gtest.h>

#include "text/unicode.h"
#include "text/utf8.h"

using namespace sinter::text;

TEST(Unicode, Classes) {
  EXPECT_TRUE(isLetter(U'a'));
  EXPECT_TRUE(isLetter(0xE9));    // é
  EXPECT_TRUE(isLetter(0x4E2D));  // 中
  EXPECT_TRUE(isLetter(0x3042));  // あ
  EXPECT_FALSE(isLetter(U'1'));
  EXPECT_FALSE(isLetter(0x0301));  // combining acute is a mark, not a letter
  EXPECT_TRUE(isNumber(U'7'));
  EXPECT_TRUE(isNumber(0x0663));  // Arabic-Indic three
  EXPECT_TRUE(isNumber(0x00BD));  // ½
  EXPECT_FALSE(isNumber(U'x'));
  EXPECT_TRUE(isWhiteSpace(0x3000));
  EXPECT_TRUE(isWhiteSpace(0x00A0));
  EXPECT_FALSE(isWhiteSpace(0x200B));  // zero-width space is not white space in Python
}

TEST(Unicode, LowerCaseAsPython) {
  EXPECT_EQ(toLower(U"ABC\u00C9\u0391\u0416"), U"abc\u00E9\u03B1\u0436");
  EXPECT_EQ(toLower(U"\u0130"), U"i\u0307");  // İ lowers to two code points
  EXPECT_EQ(toLower(U"\u00DF"), U"\u00DF");
}

TEST(Unicode, Nfc) {
  EXPECT_EQ(normalizeNfc(U"e\u0301"), U"\u00E9");
  EXPECT_EQ(normalizeNfc(U"\u1100\u1161\u11A8"), U"\uAC01");      // Hangul jamo compose to 각
  EXPECT_EQ(normalizeNfc(U"a\u0323\u0302"), U"\u1EAD");           // ậ from marks in canonical order
  EXPECT_EQ(normalizeNfc(U"a\u0302\u0323"), U"\u1EAD");           // ... and in the other order
  EXPECT_EQ(normalizeNfc(U"\u212B"), U"\u00C5");                  // Ångström sign is a singleton
  EXPECT_EQ(normalizeNfc(U"\u0344"), U"\u0308\u0301");            // excluded from composition
  EXPECT_EQ(normalizeNfc(U"plain text"), U"plain text");
}

TEST(Utf8, RoundTripAndErrors) {
  const std::string text = "caf\u00e9 \u4e2d \U0001F431";
  EXPECT_EQ(encodeUtf8(decodeUtf8(text)), text);
  EXPECT_THROW(decodeUtf8("\xff"), Utf8Error);
  EXPECT_THROW(decodeUtf8("\xe4\xb8"), Utf8Error);
  EXPECT_THROW(decodeUtf8("\xed\xa0\x80"), Utf8Error);  // surrogate
}
