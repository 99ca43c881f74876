extension Database {
    /// The newest committed version, by any thread or process, read from the two meta slots without opening a
    /// snapshot: a few microseconds (no reader slot, no catalogue), cheap enough to poll for others' commits.
    public func latestVersion() throws -> UInt64 {
        try latestMeta().version
    }
}

extension Database {
    /// The meta slots that are neither valid nor empty (damaged, or written by a newer build), each named with
    /// its page: the file opened at the other slot (`checkDamagedSlots` refuses it when that would lose a
    /// committed version). Empty for a sound file and for a new file's empty slot A.
    public var metaSlotProblems: [String] {
        if isInMemory { return [] }
        let slots = Database.readSlots(mapping: store.mapping)
        return slots.indices.compactMap { i in
            let name = i == 0 ? "meta slot A (page 0)" : "meta slot B (page 1)"
            switch slots[i] {
            case .valid: return nil
            case .damaged: return "\(name) fails its checksum"
            case .newer(let v): return "\(name) is of format \(v), newer than this build reads"
            case .foreign:
                // An empty slot A beside version 1 in slot B is a new file's; anything else was damaged.
                let base = UnsafeRawBufferPointer(start: store.mapping.base + i * pageSize, count: Meta.encodedSize)
                if base.allSatisfy({ $0 == 0 }), case .valid(let other) = slots[1 - i], other.version == 1 { return nil }
                return "\(name) holds no meta slot (damaged or never written)"
            }
        }
    }
}
