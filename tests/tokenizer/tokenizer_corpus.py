# SPDX-License-Identifier: MIT
"""The multilingual test corpus for the tokenizer: fixed texts for each kind of trouble, random mixtures of them
(seeded), and a sweep over the assigned code points of Unicode 14 (the version PCRE2 10.42, Oniguruma 6.9.8 and
Python 3.11 share)."""
import random
import unicodedata

ENGLISH = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "I'm sure they'LL say it's fine, but we'd rather you'VE checked. Don't! O'Neil's cat's toy.",
    "it'S, IT'S, it'ſ, 'tis, ''quoted'', a'b'c, ' era, 's",
    "Mr. Smith (aged 42) paid $1,000,000.00 -- or ~€920k -- on 2024-01-15 at 10:30am; 100% sure?!",
    "pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
    "See https://example.com/path?q=1&r=two#frag or mail user.name+tag@example.co.uk",
    "e.g. i.e. etc... U.S.A. Ph.D. ...!!! ??? !?!? ---- ____ ****",
]

CODE = [
    "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n    return a + b\n\n\nif __name__ == '__main__':\n    print(add(1, 2))\n",
    "#include <vector>\nint main() {\n\tstd::vector<int> v{1, 2, 3};\n\tfor (auto& x : v) x *= 2;\n\treturn 0;\n}\n",
    "fn main() -> Result<(), Box<dyn Error>> {\r\n    let s = \"héllo\";\r\n    println!(\"{s:?}\");\r\n    Ok(())\r\n}\r\n",
    '{"key": [1, 2.5e-3, null, true], "nested": {"a": "b\\n"}}',
    "for i in $(seq 1 10); do echo \"$i\" | grep -E '^[0-9]+$' >> /tmp/out.txt; done",
    "        indented   by   spaces\n\t\ttabs\t\tinside\n    \n\t\n",
    "x = [i**2 for i in range(10) if i % 2 == 0]  # squares\n",
    "<div class=\"a\">&lt;tag&gt; &amp; &#x1F600;</div>",
]

CJK = [
    "我想在apple工作1314151天～",
    "今日は良い天気ですね。カタカナとひらがな、漢字。",
    "안녕하세요 세계! 한국어 텍스트입니다.",
    "全角！？（）「」『』【】、。・ｱｲｳ　ＡＢＣ１２３",
    "中文，标点符号：“引号”和‘单引号’……——",
    "𠀀𠀁 𪚥 CJK Extension B",
]

RTL_AND_INDIC = [
    "مرحبا بالعالم",
    "مَرْحَبًا بِالْعَالَمِ! كَيْفَ حَالُكَ؟",
    "العدد ١٢٣٤٥ و ۱۲۳ فارسی",
    "שָׁלוֹם עוֹלָם",
    "नमस्ते दुनिया, क्या हाल है?",
    "สวัสดีครับ ภาษาไทย",
    "வணக்கம் உலகம்",
    "কেমন আছেন",
    "Привет, мир! Ёжик в тумане.",
    "Γειά σου Κόσμε· ᾍδης ῥήτωρ",
    "Cửa Việt, Tiếng Việt có dấu",
    "ქართული ენა",
    "Հայերեն",
    "ኢትዮጵያ",
]

EMOJI = [
    "🚀 (normal) 😶‍🌫️ (multiple emojis concatenated) ✅ (only emoji that has its own token)",
    "👩‍💻 👨‍👩‍👧‍👦 🏳️‍🌈 🏴‍☠️ 👍🏽 👋🏿 🇯🇵 🇺🇸 1️⃣ #️⃣ ❤️ ♥ 🫠",
    "🦙🦙🦙 this is 🦙.cpp",
    "👩🏽‍🔬👨🏻‍🚀🧑‍🤝‍🧑",
    "😀😃😄😁😆😅🤣😂",
]

COMBINING = [
    "e\u0301 re\u0301sume\u0301 cafe\u0301",
    "Vie\u0302\u0301t Nam",
    "A\u030A n\u0303 o\u0308 u\u0308",
    "Z\u0334\u0321\u0327\u0348a\u0337l\u0335g\u0336o\u0338 text",
    "a\u0300\u0301\u0302\u0303\u0304\u0305\u0306\u0307",
    "\u0301\u0301 leading marks",
    "ﬁ ﬂ Å K Ω ǅ Ⅻ ℌ ｶ ㌀",
    "\u1E9B\u0323 \u00C5\u212B \u1100\u1161\u11A8",
]

DIGITS = [
    "3", "33", "333", "3333", "33333333", "12345678901234567890",
    "3.14159 2,718 1e10 0x1F 0b1010 007",
    "½ ¼ ¾ ² ³ ¹ ① ⑳ Ⅻ ١٢٣ ۴۵۶ ५६७ １２３ 𝟘𝟙𝟚",
    "ied 4 ½ months",
    "w048 7tuijk dsdfhu",
    "v1.2.3-rc4+build.567",
]

WHITESPACE = [
    "", " ", "  ", "   ", "\t", "\n", "\n\n", "\n\n\n", "\t\n", "\r\n", "\r", "\r\r\n\n",
    "a  b   c    d     e",
    "   leading", "trailing   ", "  both  ",
    "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n",
    "x\u00a0y\u00a0\u00a0z",
    "ideographic\u3000space\u3000\u3000x",
    "line\u2028sep\u2029para\u0085nel",
    "mongolian\u180evowel \u180e x",
    "zero\u200bwidth\u200c\u200dx\ufeffbom",
    "en\u2002em\u2003thin\u2009hair\u200anarrow\u202fmath\u205f.",
    "\x0b\x0c vertical tab and form feed",
    "\x1c\x1d\x1e\x1f info separators",
    "a\x00b\x01c\x7f",
    "    Hello\n    Hello",
    "\n =",
]

SPECIAL_LOOKING = [
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "<think>\nreasoning\n</think>\n\nanswer<|endoftext|>",
    "<|im_start|><|im_start|>x<|im_end|",
    "<tool_call>\n{\"name\": \"f\"}\n</tool_call>",
    "<s>[INST] hi [/INST]</s>",
]

FIXED = ENGLISH + CODE + CJK + RTL_AND_INDIC + EMOJI + COMBINING + DIGITS + WHITESPACE + SPECIAL_LOOKING


def random_mixtures(count: int = 300, seed: int = 2024) -> list[str]:
    """Texts made of pieces of the fixed ones, cut at random code points, joined by random separators."""
    rng = random.Random(seed)
    pieces = [t for t in FIXED if t]
    separators = ["", " ", "  ", "\n", "\t", "\r\n", "'", "s", "1", "\u00a0", "\u200d", "\u0301"]
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            text = rng.choice(pieces)
            a = rng.randint(0, len(text))
            b = rng.randint(a, min(len(text), a + rng.randint(1, 40)))
            parts.append(text[a:b])
            parts.append(rng.choice(separators))
        out.append("".join(parts))
    return out


def assigned_code_points(limit: int = 0x32000) -> list[int]:
    return [cp for cp in range(0x20, limit)
            if not 0xD800 <= cp < 0xE000 and unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co")]


def code_point_sweep(chunk: int = 256) -> list[str]:
    """Every assigned code point, in texts that put it between letters, digits, spaces and marks."""
    cps = assigned_code_points()
    out = []
    for i in range(0, len(cps), chunk):
        chars = [chr(cp) for cp in cps[i:i + chunk]]
        out.append(" ".join(chars))
        out.append("".join(chars))
        out.append("".join(f"a{c}1{c} {c}'s\n" for c in chars[::3]))
    return out


def corpus() -> list[str]:
    return FIXED + random_mixtures()
