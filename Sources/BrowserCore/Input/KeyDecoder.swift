/// Decodes the bytes a VT100/xterm-style terminal sends into keys: UTF-8 characters, control bytes, CSI and
/// SS3 sequences for arrows, PgUp/PgDn, Home/End and function keys. The specification of the keys the browser
/// knows; tests use it to type (`KeyDecoder.keys("jj\r")`), the curses terminal gets the same keys from
/// ncurses' own decoding.
public struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// The keys of a whole input, a lone Esc at the end counting as the Esc key.
    public static func keys(_ input: String) -> [Key] {
        var d = KeyDecoder()
        return d.feed(Array(input.utf8)) + d.flush()
    }

    /// Feeds bytes; returns the keys completed so far. An incomplete sequence waits for more bytes (or `flush`).
    public mutating func feed(_ bytes: [UInt8]) -> [Key] {
        pending += bytes
        var out: [Key] = []
        while !pending.isEmpty {
            guard let (key, used) = decode(pending[...], final: false) else { break }
            pending.removeFirst(used)
            if let key { out.append(key) }
        }
        return out
    }

    /// Ends the input (the terminal's Esc delay passed): whatever is pending is decoded as it stands.
    public mutating func flush() -> [Key] {
        var out: [Key] = []
        while !pending.isEmpty {
            let (key, used) = decode(pending[...], final: true) ?? (nil, pending.count)
            pending.removeFirst(max(used, 1))
            if let key { out.append(key) }
        }
        return out
    }

    /// One key from the start of `b`: the key (nil for a sequence that is skipped) and the bytes it used, or
    /// nil when more bytes are needed.
    private func decode(_ b: ArraySlice<UInt8>, final: Bool) -> (Key?, Int)? {
        let first = b[b.startIndex]
        switch first {
        case 0x1B:
            return escape(b, final: final)
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x09: return (.tab, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x00: return (.ctrl(" "), 1)
        case 0x01...0x1A: return (.ctrl(Character(Unicode.Scalar(first + 0x60))), 1)
        case 0x1C...0x1F: return (nil, 1)
        case 0x20..<0x80: return (.char(Character(Unicode.Scalar(first))), 1)
        default:
            // UTF-8: the length from the lead byte.
            let n = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1
            guard n > 1 else { return (nil, 1) }
            if b.count < n { return final ? (nil, b.count) : nil }
            let s = String(decoding: b.prefix(n), as: UTF8.self)
            guard let c = s.first, s.unicodeScalars.first != "\u{FFFD}" else { return (nil, n) }
            return (.char(c), n)
        }
    }

    private func escape(_ b: ArraySlice<UInt8>, final: Bool) -> (Key?, Int)? {
        let s = b.startIndex
        guard b.count >= 2 else { return final ? (.escape, 1) : nil }
        let second = b[s + 1]
        if second == UInt8(ascii: "[") || second == UInt8(ascii: "O") {
            // CSI: parameters (digits and ;) then a final byte in 0x40...0x7E. SS3: one final byte.
            var i = s + 2
            while i < b.endIndex, (0x30...0x3F).contains(b[i]) { i += 1 }
            guard i < b.endIndex else { return final ? (.escape, 1) : nil }
            let finalByte = b[i]
            let params = String(decoding: b[(s + 2)..<i], as: UTF8.self)
            let used = i - s + 1
            let number = Int(params.split(separator: ";").first ?? "")
            switch finalByte {
            case UInt8(ascii: "A"): return (.up, used)
            case UInt8(ascii: "B"): return (.down, used)
            case UInt8(ascii: "C"): return (.right, used)
            case UInt8(ascii: "D"): return (.left, used)
            case UInt8(ascii: "H"): return (.home, used)
            case UInt8(ascii: "F"): return (.end, used)
            case UInt8(ascii: "Z"): return (.backTab, used)
            case UInt8(ascii: "P"): return (.function(1), used)
            case UInt8(ascii: "Q"): return (.function(2), used)
            case UInt8(ascii: "R"): return (.function(3), used)
            case UInt8(ascii: "S"): return (.function(4), used)
            case UInt8(ascii: "~"):
                switch number {
                case 1, 7: return (.home, used)
                case 2: return (.insert, used)
                case 3: return (.delete, used)
                case 4, 8: return (.end, used)
                case 5: return (.pageUp, used)
                case 6: return (.pageDown, used)
                case 15: return (.function(5), used)
                case 17, 18, 19, 20, 21: return (.function(number! - 11), used)
                case 23, 24: return (.function(number! - 12), used)
                default: return (nil, used)
                }
            default: return (nil, used)
            }
        }
        if second == 0x1B { return (.escape, 1) }
        // Alt-key: not used by the browser; the Esc counts, the key follows on its own.
        return (.escape, 1)
    }
}
