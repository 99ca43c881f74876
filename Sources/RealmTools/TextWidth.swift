/// How many terminal cells text takes: East Asian wide and fullwidth characters and emoji take two,
/// combining marks and zero-width characters none, everything else one. Measured per grapheme cluster, so an
/// emoji sequence joined with ZWJ (👩‍👩‍👧) or a flag takes two cells, and `e` + U+0301 takes one.
public enum TextWidth {
    /// The cells `s` takes.
    public static func of(_ s: String) -> Int {
        var w = 0
        for g in s { w += of(g) }
        return w
    }

    /// The cells one grapheme cluster takes.
    public static func of(_ g: Character) -> Int {
        let scalars = g.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x20 || (0x7F..<0xA0).contains(first.value) { return 0 }
        if first.isASCII { return 1 }
        // Emoji: presentation by default, or any scalar followed by U+FE0F, or flags and keycaps.
        if scalars.contains(where: { $0.value == 0xFE0F }) || first.properties.isEmojiPresentation {
            return 2
        }
        if (0x1F1E6...0x1F1FF).contains(first.value) { return 2 }
        if isZeroWidth(first) { return scalars.dropFirst().contains(where: { !isZeroWidth($0) }) ? 1 : 0 }
        return isWide(first.value) ? 2 : 1
    }

    static func isZeroWidth(_ u: Unicode.Scalar) -> Bool {
        switch u.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return true
        default: return u.value == 0x200B || (0x1160...0x11FF).contains(u.value)
        }
    }

    /// East Asian Wide (W) and Fullwidth (F) ranges (Unicode 15 EastAsianWidth.txt, merged).
    static func isWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3, 0x25FD...0x25FE,
             0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE,
             0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA, 0x26FD, 0x2705,
             0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757, 0x2795...0x2797, 0x27B0, 0x27BF,
             0x2B1B...0x2B1C, 0x2B50, 0x2B55, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF,
             0x1F004, 0x1F0CF, 0x1F18E, 0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F64F, 0x1F680...0x1F6FF,
             0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// `s` cut to at most `width` cells, with `…` when cut.
    public static func truncate(_ s: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        if of(s) <= width { return s }
        var out = ""
        var w = 0
        for g in s {
            let gw = of(g)
            if w + gw > width - 1 { break }
            out.append(g)
            w += gw
        }
        return out + "…"
    }

    /// `s` padded with spaces to `width` cells (left-aligned, or right-aligned for numbers).
    public static func pad(_ s: String, to width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - of(s)))
        return right ? fill + s : s + fill
    }
}
