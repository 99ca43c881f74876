import Foundation
@testable import RealmCoreFile
import Testing
import TestSupport

/// Decimal128: the BID encodings of format 24's narrow leaves widen to the same values.
@Suite struct DecimalTests {
    @Test func narrowEncodingsWiden() {
        // 1 in BID32 (exponent bias 101) and BID64 (bias 398).
        #expect(CoreDecimal128.fromBID32(0x3280_0001).description == "1")
        #expect(CoreDecimal128.fromBID64(0x31C0_0000_0000_0001).description == "1")
        // -12.5 = -125E-1
        #expect(CoreDecimal128.fromBID64(0xB1A0_0000_0000_007D).description == "-12.5")
        // Realm's narrow nulls widen to its 128-bit null.
        #expect(CoreDecimal128.fromBID32(0x7C00_00AA) == .realmNull)
        #expect(CoreDecimal128.fromBID64(0x7C00_0000_0000_00AA) == .realmNull)
        #expect(CoreDecimal128.zero.description == "0")
        #expect(CoreDecimal128(low: 125, high: 0x3040_0000_0000_0000 - (2 << 49)).description == "1.25")
        #expect(CoreDecimal128(low: 15, high: 0x3040_0000_0000_0000 + (39 << 49)).description == "1.5E+40")
    }
}
