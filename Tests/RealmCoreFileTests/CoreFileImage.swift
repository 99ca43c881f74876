import Foundation

/// Builds small Realm Core files node by node, for layouts no fixture has: nodes of 64-bit integers (with or
/// without refs), short-string leaves and blobs, then a streaming-form header and footer.
struct CoreFileImage {
    var bytes = [UInt8](repeating: 0, count: 24)

    /// Appends a node; returns its ref.
    mutating func node(flags: UInt8, count: Int, payload: [UInt8]) -> Int {
        let ref = bytes.count
        bytes += Array("AAAA".utf8) + [flags, UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        bytes += payload
        while bytes.count % 8 != 0 { bytes.append(0) }
        return ref
    }

    /// 64-bit integers (`hasRefs` for structure nodes).
    mutating func ints(_ values: [Int64], hasRefs: Bool = false) -> Int {
        node(flags: (hasRefs ? 0x40 : 0) | 7, count: values.count, payload: values.flatMap { v in withUnsafeBytes(of: v.littleEndian) { Array($0) } })
    }

    static func tagged(_ v: Int64) -> Int64 { v << 1 | 1 }

    /// A short-string leaf of width 16.
    mutating func shortStrings(_ values: [String]) -> Int {
        var payload: [UInt8] = []
        for s in values {
            var slot = Array(s.utf8) + [UInt8](repeating: 0, count: 16 - s.utf8.count)
            slot[15] = UInt8(15 - s.utf8.count)
            payload += slot
        }
        return node(flags: 0x08 | 5, count: values.count, payload: payload)  // multiply scheme, width 16
    }

    /// An `ArrayBlob` of raw bytes (ignore scheme).
    mutating func blob(_ data: [UInt8]) -> Int {
        node(flags: 0x10, count: data.count, payload: data)
    }

    /// The file in streaming form with `top` as its top ref.
    func streaming(top: Int, format: UInt8) -> [UInt8] {
        var out = bytes
        for i in 0..<8 { out[i] = 0xFF }
        out[16...19] = ArraySlice(Array("T-DB".utf8))
        out[20] = format
        out += withUnsafeBytes(of: UInt64(top).littleEndian) { Array($0) }
        out += withUnsafeBytes(of: UInt64(0x3034_1252_37E5_26C8).littleEndian) { Array($0) }
        return out
    }
}
