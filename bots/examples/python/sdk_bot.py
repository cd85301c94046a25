from meldref.bots.sdk import Bot, run


class Tidy(Bot):
    name = "tidy"

    def draw(self, req):  # a wild on the discard pile is worth taking
        wild = req.view.is_wild(req.view.discard_top)
        return "draw discard" if wild and "draw discard" in req.legal else self.fallback(req)

    def play(self, req):  # Phase 10: lay, hit, then discard; Five Crowns: go out first
        def cost(action):  # the discard that goes out is the one with the most words
            verb, *rest = action.split()
            wild = verb == "discard" and req.view.is_wild(rest[0])  # a wild goes last
            return ("lay", "hit", "discard").index(verb), -len(rest), wild
        return min(req.legal, key=cost) if req.legal else self.fallback(req)
    discard = play  # Five Crowns decides the same way


run(Tidy())
