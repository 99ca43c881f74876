/// `n` and a noun, in the singular for one: "1 object", "2 objects", "3 classes" (`plural` when not an `s` added).
public func counted(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(n) \(n == 1 ? singular : plural ?? singular + "s")"
}
