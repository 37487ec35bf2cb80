#pragma once
// CLIP's text cleaning, as the CLIPTokenizer that sd-scripts uses applies it:
//   whitespace_clean(ftfy.fix_text(text)).lower()
// ftfy itself is not available here; this does the parts of fix_text that change ordinary
// captions (HTML entities, Latin ligatures, full-width ASCII, curly quotes, control characters,
// NFC). Mojibake repair (re-decoding text that went through the wrong code page) is not done.
#include <string>

namespace sinter::text {

// Throws Utf8Error when the text is not valid UTF-8.
std::u32string cleanClipText(const std::string& utf8Text);

}  // namespace sinter::text
