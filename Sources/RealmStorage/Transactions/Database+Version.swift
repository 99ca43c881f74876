extension Database {
    /// The newest committed version, by any thread or process, read from the two meta slots without opening a
    /// snapshot: a few microseconds (no reader slot, no catalogue), cheap enough to poll for others' commits.
    public func latestVersion() throws -> UInt64 {
        try latestMeta().version
    }
}
