package sampleservice

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// Shape of the generated dataset.
const (
	// txPerScale is the number of transactions per unit of Scale.
	txPerScale = 6000
	// numParties is the number of ordinary parties; the first
	// numFundingParties of them hold positions on every perpetual market.
	numParties        = 16
	numFundingParties = 5
	numOutsiders      = 24
	numNodes          = 14
	numEpochs         = 40
	epochLength       = 24 * time.Hour
	// fundingWindow is how far back funding payments go.
	fundingWindow = 30 * 24 * time.Hour
	// blockNanos is the (fixed) block interval of the simulated chain.
	blockNanos = 1_150_000_000
)

// genesis is the time of the first block that carries a transaction; funding
// payments and delegations lie before it, transactions after it.
var genesis = time.Date(2024, 3, 14, 10, 0, 0, 0, time.UTC)

// Generate builds the dataset for the options: assets, funding payments,
// delegations and an on-demand transaction source. The same options always
// give the same dataset, byte for byte.
func Generate(opts DatasetOptions) (*Dataset, error) {
	scale := opts.Scale
	if scale <= 0 {
		scale = 1
	}
	g := newGenerator(opts.Seed)
	src := newTxSource(g, scale*txPerScale)

	perps := make([]string, 0, len(g.perps))
	for _, m := range g.perps {
		perps = append(perps, g.markets[m].id)
	}
	nodes := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		nodes[i] = n.id
	}
	last := src.rows[len(src.rows)-1]
	height := g.firstBlock + uint64(last.block)
	return &Dataset{
		Assets:          g.assets,
		FundingPayments: g.fundingPayments(),
		Delegations:     g.delegations(),
		Transactions:    src,
		Parties:         append([]string(nil), g.parties...),
		Markets:         perps,
		Nodes:           nodes,
		BlockHeight:     height,
		BlockTime:       g.blockTime(height),
		Notable:         src.notable,
	}, nil
}

// generator holds the entities every part of the dataset refers to. It is
// read-only once built, so transactions can be generated concurrently.
type generator struct {
	seed int64

	assets []Asset
	// assetIdx finds an asset by symbol (first of that symbol).
	assetIdx map[string]int
	// enabled are the indices of enabled assets with a source.
	enabled []int

	parties    []string
	outsiders  []string
	submitters []string // parties, then node keys, then outsiders
	nodes      []genNode
	markets    []genMarket
	perps      []int // indices of perpetual markets in markets

	firstBlock uint64
	firstEpoch uint64
}

type genNode struct {
	id, vegaPubKey, ethAddress, chainPubKey string
	name, country, infoURL, avatarURL       string
}

type productKind uint8

const (
	productFuture productKind = iota
	productPerpetual
	productSpot
)

type genMarket struct {
	id, code, name, quoteName string
	product                   productKind
	settlement                int // asset index (future, perpetual)
	base, quote               int // asset indices (spot)
	decimals                  uint64
	positionDecimals          int64
	price                     uint64 // typical price in market decimals
	// funding schedule of a perpetual: interval and offset from midnight.
	fundingEvery, fundingOffset time.Duration
}

func newGenerator(seed int64) *generator {
	g := &generator{seed: seed, assetIdx: map[string]int{}}
	g.buildAssets()
	r := newRand(seed, streamParties, 0)
	for range numParties {
		g.parties = append(g.parties, hexID(r))
	}
	for range numOutsiders {
		g.outsiders = append(g.outsiders, hexID(r))
	}
	g.buildNodes()
	g.submitters = append(g.submitters, g.parties...)
	for _, n := range g.nodes {
		g.submitters = append(g.submitters, n.vegaPubKey)
	}
	g.submitters = append(g.submitters, g.outsiders...)
	g.buildMarkets()
	r = newRand(seed, streamMisc, 0)
	g.firstBlock = 34_500_000 + uint64(r.IntN(20_000))
	g.firstEpoch = 1_200 + uint64(r.IntN(100))
	return g
}

// blockTime is the Unix-nanosecond time of a block.
func (g *generator) blockTime(block uint64) int64 {
	return genesis.UnixNano() + int64(block-g.firstBlock)*blockNanos
}

// assetSpec describes one asset of the dataset.
type assetSpec struct {
	name, symbol string
	decimals     uint64
	quantum      string
	source       byte   // 'e' ERC-20, 'b' built-in, 0 none
	contract     string // known contract address, else random
	status       string // default STATUS_ENABLED
}

var assetSpecs = []assetSpec{
	{"Tether USD", "USDT", 6, "1000000", 'e', "0xdac17f958d2ee523a2206206994597c13d831ec7", ""},
	{"USD Coin", "USDC", 6, "1000000", 'e', "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", ""},
	{"Dai Stablecoin", "DAI", 18, "1000000000000000000", 'e', "0x6b175474e89094c44da98b954eedeac495271d0f", ""},
	{"Wrapped Ether", "WETH", 18, "500000000000000", 'e', "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", ""},
	{"Wrapped BTC", "WBTC", 8, "2000", 'e', "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599", ""},
	{"Vega", "VEGA", 18, "1000000000000000000", 'e', "0xcb84d72e61e383767c4dfeb2d8ff7f4fb89abc6e", ""},
	{"ChainLink Token", "LINK", 18, "50000000000000000", 'e', "", ""},
	{"Uniswap", "UNI", 18, "100000000000000000", 'e', "", ""},
	{"Aave Token", "AAVE", 18, "10000000000000000", 'e', "", ""},
	{"Maker", "MKR", 18, "500000000000000", 'e', "", ""},
	{"Lido DAO Token", "LDO", 18, "300000000000000000", 'e', "", ""},
	{"Arbitrum", "ARB", 18, "500000000000000000", 'e', "", ""},
	{"Optimism", "OP", 18, "300000000000000000", 'e', "", ""},
	{"Matic Token", "MATIC", 18, "1000000000000000000", 'e', "", ""},
	{"SHIBA INU", "SHIB", 18, "40000000000000000000000", 'e', "", ""},
	{"Pepe", "PEPE", 18, "100000000000000000000000", 'e', "", "STATUS_PROPOSED"},
	{"Euro Coin", "EURC", 6, "1000000", 'e', "", ""},
	{"PayPal USD", "PYUSD", 6, "1000000", 'e', "", "STATUS_PENDING_LISTING"},
	{"TrueUSD", "TUSD", 18, "1000000000000000000", 'e', "", "STATUS_REJECTED"},
	{"Frax", "FRAX", 18, "1000000000000000000", 'e', "", ""},
	{"Curve DAO Token", "CRV", 18, "2000000000000000000", 'e', "", ""},
	{"Synthetix Network Token", "SNX", 18, "300000000000000000", 'e', "", ""},
	{"Compound", "COMP", 18, "20000000000000000", 'e', "", ""},
	{"Graph Token", "GRT", 18, "3000000000000000000", 'e', "", ""},
	{"Ethereum Name Service", "ENS", 18, "50000000000000000", 'e', "", ""},
	{"Rocket Pool", "RPL", 18, "40000000000000000", 'e', "", ""},
	{"Liquid staked Ether 2.0", "stETH", 18, "500000000000000", 'e', "", ""},
	{"Rocket Pool ETH", "rETH", 18, "450000000000000", 'e', "", ""},
	{"Coinbase Wrapped Staked ETH", "cbETH", 18, "480000000000000", 'e', "", "STATUS_PROPOSED"},
	{"Fetch", "FET", 18, "500000000000000000", 'e', "", ""},
	{"Injective Token", "INJ", 18, "30000000000000000", 'e', "", ""},
	{"Immutable X", "IMX", 18, "400000000000000000", 'e', "", ""},
	{"ApeCoin", "APE", 18, "600000000000000000", 'e', "", ""},
	{"SAND", "SAND", 18, "2000000000000000000", 'e', "", ""},
	{"Decentraland MANA", "MANA", 18, "2000000000000000000", 'e', "", ""},
	{"Basic Attention Token", "BAT", 18, "3000000000000000000", 'e', "", "STATUS_PENDING_LISTING"},
	{"1INCH Token", "1INCH", 18, "2000000000000000000", 'e', "", ""},
	{"SushiToken", "SUSHI", 18, "800000000000000000", 'e', "", ""},
	{"yearn.finance", "YFI", 18, "100000000000000", 'e', "", ""},
	{"Balancer", "BAL", 18, "250000000000000000", 'e', "", ""},
	{"Wrapped SOL", "WSOL", 9, "6000000", 'e', "", ""},
	{"Polygon Ecosystem Token", "POL", 18, "1000000000000000000", 'e', "", ""},
	{"Ethena USDe", "USDe", 18, "1000000000000000000", 'e', "", "STATUS_REJECTED"},
	{"Ondo", "ONDO", 18, "1000000000000000000", 'e', "", ""},
	{"Render Token", "RNDR", 18, "100000000000000000", 'e', "", ""},
	{"Tether Gold", "XAUt", 6, "500", 'e', "", ""},
	{"Café Crème Société Générale Euro", "EURCV", 18, "1000000000000000000", 'e', "", ""},
	{"日本円ステーブルコイン", "JPYC", 18, "150000000000000000000", 'e', "", ""},
	{"🚀 Rocket Token", "ROCKET", 18, "1000000000000000000", 'e', "", "STATUS_PROPOSED"},
	{"Unnamed Bridge Token", "", 18, "1000000000000000000", 'e', "", ""},
	{"tDAI TEST", "tDAI", 5, "1", 'b', "", ""},
	{"tBTC TEST", "tBTC", 5, "1", 'b', "", ""},
	{"tEURO TEST", "tEURO", 5, "1", 'b', "", ""},
	{"tUSDC TEST", "tUSDC", 5, "1", 'b', "", ""},
	{"tGBP TEST", "tGBP", 5, "1", 'b', "", ""},
	{"Fairground voting token", "tVOTE", 18, "1000000000000000000", 'b', "", ""},
	{"tETH TEST", "tETH", 18, "500000000000000", 'b', "", ""},
	{"tSOL TEST", "tSOL", 9, "6000000", 'b', "", ""},
	{"Gold (test)", "tXAU", 6, "500", 'b', "", ""},
	{"Japanese Yen (test)", "tJPY", 0, "150", 'b', "", ""},
	{"Crude Oil (test)", "tOIL", 4, "100", 'b', "", "STATUS_PENDING_LISTING"},
	{"Korean Won (test)", "tKRW", 0, "1300", 'b', "", "STATUS_REJECTED"},
	{"Legacy Asset", "LEGACY", 18, "1000000000000000000", 0, "", "STATUS_UNSPECIFIED"},
	{"Withdrawn Listing", "WDL", 6, "1000000", 0, "", "STATUS_REJECTED"},
	{"Pending Unsourced Asset", "PUA", 8, "100000000", 0, "", "STATUS_PROPOSED"},
	{"Unspecified Builtin", "UBI", 5, "1", 'b', "", "STATUS_UNSPECIFIED"},
}

func (g *generator) buildAssets() {
	r := newRand(g.seed, streamAssets, 0)
	for i, s := range assetSpecs {
		a := Asset{
			ID:     hexID(r),
			Status: upstream.AssetStatus(s.status),
			Details: AssetDetails{
				Name:     s.name,
				Symbol:   s.symbol,
				Decimals: upstream.Uint64(s.decimals),
				Quantum:  s.quantum,
			},
		}
		if a.Status == "" {
			a.Status = "STATUS_ENABLED"
		}
		switch s.source {
		case 'e':
			addr := s.contract
			if addr == "" {
				addr = ethAddress(r)
			}
			limit := "0"
			if !chance(r, 1, 8) {
				limit = scaled(r, between(r, 1, 20)*10_000, int(s.decimals))
			}
			a.Details.ERC20 = &ERC20{
				ContractAddress:   addr,
				LifetimeLimit:     limit,
				WithdrawThreshold: scaled(r, between(r, 1, 50)*1_000, int(s.decimals)),
			}
		case 'b':
			a.Details.BuiltinAsset = &BuiltinAsset{
				MaxFaucetAmountMint: "10000" + strings.Repeat("0", int(s.decimals)),
			}
		}
		g.assets = append(g.assets, a)
		if _, ok := g.assetIdx[s.symbol]; !ok {
			g.assetIdx[s.symbol] = i
		}
		if a.Status == "STATUS_ENABLED" && s.source != 0 {
			g.enabled = append(g.enabled, i)
		}
	}
}

func (g *generator) asset(symbol string) int {
	i, ok := g.assetIdx[symbol]
	if !ok {
		panic("sampleservice: no asset " + symbol)
	}
	return i
}

var nodeSpecs = []struct{ name, country, site string }{
	{"Figment", "CA", "figment.io"},
	{"Chorus One", "CH", "chorus.one"},
	{"P2P.ORG", "CY", "p2p.org"},
	{"Staking Facilities", "DE", "stakingfacilities.com"},
	{"Greenfield One", "DE", "greenfield.xyz"},
	{"Nodes Guru", "UA", "nodes.guru"},
	{"RockX", "SG", "rockx.com"},
	{"Lovali", "GB", "lovali.xyz"},
	{"Commodum", "NL", "commodum.io"},
	{"XPRV", "US", "xprv.io"},
	{"Ryabina", "RU", "ryabina.io"},
	{"Validvs", "ES", "validvs.io"},
	{"B-Harvest", "KR", "bharvest.io"},
	{"Gateway.fm", "EE", "gateway.fm"},
}

func (g *generator) buildNodes() {
	r := newRand(g.seed, streamNodes, 0)
	for i := range numNodes {
		s := nodeSpecs[i]
		key := make([]byte, 32)
		for j := range key {
			key[j] = byte(r.Uint32())
		}
		g.nodes = append(g.nodes, genNode{
			id:          hexID(r),
			vegaPubKey:  hexID(r),
			ethAddress:  ethAddress(r),
			chainPubKey: base64.StdEncoding.EncodeToString(key),
			name:        s.name,
			country:     s.country,
			infoURL:     "https://" + s.site,
			avatarURL:   "https://" + s.site + "/avatar.png",
		})
	}
}

func (g *generator) buildMarkets() {
	r := newRand(g.seed, streamMarkets, 0)
	usdt, usdc := g.asset("USDT"), g.asset("USDC")
	add := func(m genMarket) {
		m.id = hexID(r)
		if m.product == productPerpetual {
			g.perps = append(g.perps, len(g.markets))
		}
		g.markets = append(g.markets, m)
	}
	h := time.Hour
	add(genMarket{code: "BTC/USDT-PERP", name: "Bitcoin / Tether USD Perpetual", quoteName: "USDT", product: productPerpetual, settlement: usdt, decimals: 1, positionDecimals: 4, price: 700_000, fundingEvery: 8 * h})
	add(genMarket{code: "ETH/USDT-PERP", name: "Ether / Tether USD Perpetual", quoteName: "USDT", product: productPerpetual, settlement: usdt, decimals: 2, positionDecimals: 3, price: 350_000, fundingEvery: 8 * h})
	add(genMarket{code: "SOL/USDT-PERP", name: "Solana / Tether USD Perpetual", quoteName: "USDT", product: productPerpetual, settlement: usdt, decimals: 3, positionDecimals: 2, price: 180_000, fundingEvery: 8 * h, fundingOffset: 4 * h})
	add(genMarket{code: "LINK/USDT-PERP", name: "Chainlink / Tether USD Perpetual", quoteName: "USDT", product: productPerpetual, settlement: usdt, decimals: 4, positionDecimals: 1, price: 185_000, fundingEvery: 4 * h})
	add(genMarket{code: "INJ/USDT-PERP", name: "Injective / Tether USD Perpetual", quoteName: "USDT", product: productPerpetual, settlement: usdt, decimals: 3, positionDecimals: 1, price: 38_000, fundingEvery: 12 * h})
	add(genMarket{code: "EUR/USD-PERP", name: "Euro / US Dollar Perpetual", quoteName: "USD", product: productPerpetual, settlement: usdc, decimals: 5, positionDecimals: 0, price: 108_900, fundingEvery: 24 * h, fundingOffset: 16 * h})
	add(genMarket{code: "ETH/USDT-MAR24", name: "Ether / Tether USD Future (Mar 2024)", quoteName: "USDT", product: productFuture, settlement: usdt, decimals: 2, positionDecimals: 3, price: 352_000})
	add(genMarket{code: "BTC/USDC-Q2-24", name: "Bitcoin / USD Coin Quarterly (Jun 2024)", quoteName: "USDC", product: productFuture, settlement: usdc, decimals: 1, positionDecimals: 4, price: 712_000})
	add(genMarket{code: "ELECTION-2024", name: "US Presidential Election 2024 (binary)", quoteName: "USDT", product: productFuture, settlement: usdt, decimals: 3, positionDecimals: 0, price: 520})
	add(genMarket{code: "GOLD/USDT-JUN24", name: "Gold / Tether USD Future (Jun 2024)", quoteName: "USDT", product: productFuture, settlement: usdt, decimals: 2, positionDecimals: 2, price: 216_000})
	add(genMarket{code: "BTC/USDT", name: "Bitcoin / Tether USD Spot", product: productSpot, base: g.asset("WBTC"), quote: usdt, decimals: 1, positionDecimals: 4, price: 700_500})
	add(genMarket{code: "ETH/USDC", name: "Ether / USD Coin Spot", product: productSpot, base: g.asset("WETH"), quote: usdc, decimals: 2, positionDecimals: 3, price: 350_100})
	add(genMarket{code: "VEGA/USDT", name: "Vega / Tether USD Spot", product: productSpot, base: g.asset("VEGA"), quote: usdt, decimals: 4, positionDecimals: 0, price: 21_500})
}

// fundingPayments returns the funding payments of every party on every
// perpetual market. Markets whose periods end at the same time share the
// exact timestamp (the same block), so ties occur across markets.
func (g *generator) fundingPayments() []FundingPayment {
	r := newRand(g.seed, streamFunding, 0)
	end := genesis
	start := end.Add(-fundingWindow)
	var out []FundingPayment
	for _, mi := range g.perps {
		m := g.markets[mi]
		seq := uint64(100 + r.IntN(900))
		// Participation of each party in this market.
		part := make([]int, len(g.parties))
		size := make([]int64, len(g.parties))
		for p := range g.parties {
			if p < numFundingParties {
				part[p] = 80 + r.IntN(21)
			} else {
				part[p] = r.IntN(15)
			}
			size[p] = between(r, 1, 500)
		}
		for t := start.Truncate(24 * time.Hour).Add(m.fundingOffset); t.Before(end); t = t.Add(m.fundingEvery) {
			if t.Before(start) {
				continue
			}
			seq++
			ts := t.UnixNano() + slotJitter(g.seed, t)
			rate := r.Int64N(2001) - 1000 // funding rate in basis points * 10
			for p, party := range g.parties {
				if r.IntN(100) >= part[p] {
					continue
				}
				// A party's position drifts and sometimes flips side.
				if chance(r, 1, 12) {
					size[p] = -size[p]
				}
				size[p] += r.Int64N(21) - 10
				if size[p] == 0 {
					size[p] = 1
				}
				amount := size[p] * rate * int64(m.price) / 1000
				if chance(r, 1, 150) {
					amount = 0
				}
				out = append(out, FundingPayment{
					PartyID:          party,
					MarketID:         m.id,
					FundingPeriodSeq: upstream.Uint64(seq),
					Timestamp:        upstream.UnixNanos(ts),
					Amount:           itoa(amount),
				})
			}
		}
	}
	return out
}

// slotJitter is the sub-second part of the block time at which a funding
// period ending at t is settled: the same for every market.
func slotJitter(seed int64, t time.Time) int64 {
	return int64(mix64(uint64(seed)^uint64(t.Unix())) % 1_000_000_000)
}

// delegations returns the delegation balances of every party, per node and
// per epoch. Every row of an epoch has the epoch's start time, so VegaTime
// ties are the rule.
func (g *generator) delegations() []Delegation {
	r := newRand(g.seed, streamDelegations, 0)
	firstStart := epochsStart()
	var out []Delegation
	for p, party := range g.parties {
		// Each party delegates to a handful of nodes from some epoch on.
		n := 7 + r.IntN(numNodes-6)
		nodes := r.Perm(numNodes)[:n]
		for _, ni := range nodes {
			from := r.IntN(8)
			if p == 0 {
				from = 0
			}
			// Amount in VEGA (18 decimals).
			units := between(r, 100, 250_000)
			for e := from; e < numEpochs; e++ {
				if e > from && chance(r, 1, 15) {
					continue // no balance change recorded this epoch
				}
				if chance(r, 1, 4) {
					units += r.Int64N(units/5+1) - units/10
					if units < 1 {
						units = 1
					}
				}
				epochStart := firstStart.Add(time.Duration(e) * epochLength)
				out = append(out, Delegation{
					Delegation: upstream.Delegation{
						Party:    party,
						NodeID:   g.nodes[ni].id,
						EpochSeq: utoa(g.firstEpoch + uint64(e)),
						Amount:   scaled(r, units, 18),
					},
					VegaTime: epochStart.UnixNano() + 437_000_000,
				})
			}
		}
	}
	return out
}

// epochsStart is the start of the first epoch with delegations. The last
// one began a few hours before the first transaction, so it is the epoch
// current when the transactions start.
func epochsStart() time.Time {
	return genesis.Add(-(numEpochs-1)*epochLength - 6*time.Hour)
}

// epochAt returns the epoch sequence number at a time.
func (g *generator) epochAt(ns int64) uint64 {
	firstStart := epochsStart().UnixNano()
	if ns < firstStart {
		return g.firstEpoch
	}
	return g.firstEpoch + uint64((ns-firstStart)/int64(epochLength))
}

// randomParty returns one of the dataset's parties.
func (g *generator) randomParty(r *rand.Rand) string { return pick(r, g.parties) }
