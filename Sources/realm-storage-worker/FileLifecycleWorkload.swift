#if canImport(Glibc)
import Glibc
#endif
import RealmStorage

/// Workloads for the tests of how files are made, replaced and given up.
enum FileLifecycle {
    /// `create-compact-copy PATH`: creates the database with one object (its first logged commit creates the
    /// commit log), compacts it in place, then writes a copy to `PATH.copy`, printing `created`, `compacted`
    /// and `copied` after each step (the tests trace the file system calls between them).
    static func runCreateCompactCopy(path: String) throws {
        let db = try Database.open(path: path, options: workerOptions)
        try db.write { tx in
            try tx.createClasses([ClassSchema(name: "Item", properties: [PropertySchema(name: "n", type: .int)])])
            _ = try tx.createObject("Item", ["n": .int(1)])
        }
        emit("created")
        try db.compact()
        emit("compacted")
        try db.writeCopy(to: path + ".copy")
        emit("copied")
    }

    /// `open-repeatedly PATH COUNT`: opens PATH COUNT times (more than 100), keeping none open, and prints
    /// `opened N` (how many opens succeeded) and `heap-growth BYTES`: how much further the heap reaches after
    /// the last open than after the hundredth, a measure of what each open leaves allocated.
    static func runOpenRepeatedly(path: String, count: Int) {
        var baseline = 0
        var opened = 0
        for i in 0..<count {
            if i == 100 { baseline = heapInUse() }
            do {
                _ = try Database.open(path: path, options: workerOptions)
                opened += 1
            } catch {
                continue  // the opens that fail are the ones measured
            }
        }
        emit("opened \(opened)")
        emit("heap-growth \(heapInUse() - baseline)")
    }

    /// The end of the main thread's heap (`sbrk(0)`): small allocations of this (single-threaded) loop come
    /// from there, so what the opens keep allocated moves it up.
    static func heapInUse() -> Int { Int(bitPattern: sbrk(0)) }
}
